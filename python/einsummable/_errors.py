"""The front end's exceptions."""


class FrontendError(Exception):
    """A model the front end cannot translate: names the ATen op (or the
    argument) and, where the trace recorded it, the model's source line."""

    def __init__(self, message, where=None):
        self.where = where
        super().__init__(message if not where else "%s: %s" % (where,
                                                                message))


class CompileError(Exception):
    """ein-compile refused the program; the message is its diagnostic,
    which names the model's source line when the trace recorded it."""
