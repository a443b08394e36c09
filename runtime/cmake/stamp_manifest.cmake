# Writes OUTPUT, the hand-written test bundle manifest INPUT with its
# placeholder kernel library hash (64 zeros) replaced by the SHA-256 of
# LIBRARY, as built (the library's bytes depend on the compiler).
# Usage: cmake -DINPUT=m.json -DLIBRARY=k.so -DOUTPUT=m.json -P stamp_manifest.cmake
file(READ "${INPUT}" manifest)
file(SHA256 "${LIBRARY}" digest)
string(REPEAT "0" 64 placeholder)
string(REPLACE "${placeholder}" "${digest}" manifest "${manifest}")
file(WRITE "${OUTPUT}" "${manifest}")
