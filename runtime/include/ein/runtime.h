/*===- runtime.h - The Einsummable runtime's C API -----------------*- C -*-===*
 *
 * Loads a bundle (docs/bundle-format.md), binds its inputs, runs its
 * schedule on the bundle's devices and reads its outputs. Inputs and outputs
 * cross the API as whole logical tensors, dense and row-major in their
 * element type (bf16 and f16 as 2-byte payloads); the runtime scatters them
 * to and gathers them from the blocks the plan placed on each device, outside
 * any timed region.
 *
 * Every function returns EIN_OK or EIN_ERROR; after an error,
 * ein_last_error() says what went wrong, in a sentence, on this thread.
 *
 *===----------------------------------------------------------------------===*/

#ifndef EIN_RUNTIME_H
#define EIN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ein_status { EIN_OK = 0, EIN_ERROR = 1 } ein_status;

typedef struct ein_bundle ein_bundle;

typedef struct ein_load_options {
  /* Check, at every step, that each pointer a step receives lies inside its
   * device's arena, and fill every non-input byte of every arena with 0xff
   * (a NaN in every float type) before each run, so a step that reads
   * memory nothing wrote poisons the result. */
  int debug;
} ein_load_options;

/* The description of one input or output. `dtype` is "f32", "bf16", ...;
 * `shape` has `rank` entries and lives as long as the bundle. */
typedef struct ein_tensor_info {
  const char *dtype;
  int rank;
  const int64_t *shape;
  size_t bytes;
} ein_tensor_info;

/* The message of the last failed call on this thread ("" if none). */
const char *ein_last_error(void);

/* Loads and validates the bundle in `directory` and prepares its devices.
 * `options` may be NULL. */
ein_status ein_bundle_load(const char *directory,
                           const ein_load_options *options,
                           ein_bundle **bundle);
void ein_bundle_free(ein_bundle *bundle);

/* "cpu" or "cuda", and the number of devices the schedule uses. */
const char *ein_bundle_target(const ein_bundle *bundle);
int ein_bundle_devices(const ein_bundle *bundle);

/* One line on what runs the bundle (devices, graph, libraries); it lives
 * until the next call on this bundle. */
const char *ein_bundle_describe(const ein_bundle *bundle);

int ein_bundle_num_inputs(const ein_bundle *bundle);
int ein_bundle_num_outputs(const ein_bundle *bundle);
ein_status ein_bundle_input_info(const ein_bundle *bundle, int index,
                                 ein_tensor_info *info);
ein_status ein_bundle_output_info(const ein_bundle *bundle, int index,
                                  ein_tensor_info *info);

/* Copies input `index` (exactly info.bytes bytes) to its blocks. */
ein_status ein_bundle_set_input(ein_bundle *bundle, int index, const void *data,
                                size_t bytes);

/* Runs the schedule once; every input must have been set. */
ein_status ein_bundle_run(ein_bundle *bundle);

/* Copies output `index` of the last run into `data` (info.bytes bytes). */
ein_status ein_bundle_get_output(const ein_bundle *bundle, int index,
                                 void *data, size_t bytes);

/* Runs `warmup` untimed and then `iterations` timed steps and stores the
 * median milliseconds of one step (for several devices: from the first
 * device's start to the last device's end). */
ein_status ein_bundle_bench(ein_bundle *bundle, int warmup, int iterations,
                            double *median_ms);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EIN_RUNTIME_H */
