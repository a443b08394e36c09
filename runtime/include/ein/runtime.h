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
 * Handles. Every function taking a bundle refuses, without reading it, a
 * NULL handle and one that is not a live bundle (one ein_bundle_free has
 * freed, or no ein_bundle_load returned; a freed handle whose address a
 * later load happens to reuse names that bundle): those returning
 * ein_status return EIN_ERROR, those returning a count or a number -1, those
 * returning a string NULL, each with ein_last_error() naming the function
 * ("ein_bundle_run: the bundle handle is NULL"). ein_bundle_free(NULL) does
 * nothing, as free(NULL); freeing a handle twice is refused, not done.
 *
 * Ranks. A bundle for several nodes (ein_bundle_nodes) loaded in a process
 * that Open MPI's mpirun started, one process per node, runs as ranks:
 * rank r holds node r's devices and runs their steps, and the ranks move
 * data between nodes through MPI (docs/distributed.md). Then every call
 * that moves data (load, set_input, run, get_output, bench, profile) is
 * collective: every rank makes it, in the same order. Rank 0's inputs are
 * scattered (the other ranks' `data` is ignored and may be NULL), outputs
 * are gathered into rank 0's `data` (likewise), a benchmark step takes the
 * slowest rank's time, and a profile holds, at rank 0, each step's time on
 * the rank that ran it. Without a launcher, one process runs every node.
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

/* The options of a load. The struct grows at its end: ein_bundle_load
 * reads `debug` alone (the struct as it first was, so a caller built
 * against that header keeps working), ein_bundle_load_with as many bytes
 * as its caller says it has. Zero every field you do not set. */
typedef struct ein_load_options {
  /* Check, at every step, that each pointer a step receives lies inside its
   * device's arena, and fill every non-input byte of every arena with 0xff
   * (a NaN in every float type) before each run, so a step that reads
   * memory nothing wrote poisons the result. */
  int debug;
  /* Logical devices (ein_bundle_load_with only). The CUDA backend runs the
   * bundle's device d on GPU device_map[d]: `device_map_size` entries, one
   * per device of the bundle, each a CUDA device index (0 up to the GPUs
   * CUDA sees). Several devices may share a GPU: each keeps its own arena,
   * streams and events there, a transfer between two of them is a
   * device-to-device copy on the stream a peer copy would take, and the
   * step stays one CUDA graph; peer access is needed only between distinct
   * GPUs. Then timings are not those of as many GPUs (ein_bundle_gpus).
   * 0 and NULL: device d on GPU d. The CPU backend refuses a map. */
  int device_map_size;
  const int *device_map;
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

/* ein_bundle_load reading the first `options_size` bytes of `options`
 * (pass sizeof *options): the fields past them keep their defaults, so a
 * caller built against an older runtime.h is read as it was written. A
 * size below the first field's or above this runtime's struct is an error.
 * A device map (device_map_size, device_map) that is malformed, names a
 * GPU CUDA does not see, or is given for a cpu bundle is an error whose
 * message begins "the device map". */
ein_status ein_bundle_load_with(const char *directory,
                                const ein_load_options *options,
                                size_t options_size, ein_bundle **bundle);
void ein_bundle_free(ein_bundle *bundle);

/* "cpu" or "cuda", and the number of devices the schedule uses. */
const char *ein_bundle_target(const ein_bundle *bundle);
int ein_bundle_devices(const ein_bundle *bundle);

/* The distinct GPUs the bundle's devices run on: ein_bundle_devices,
 * unless a device map (ein_load_options) puts several on one GPU; 0 for
 * the cpu target. */
int ein_bundle_gpus(const ein_bundle *bundle);

/* The nodes the bundle's devices sit on (1 unless compiled for a topology
 * of several), the processes the run uses (1, or the nodes when a launcher
 * started one per node) and this process's rank among them. */
int ein_bundle_nodes(const ein_bundle *bundle);
int ein_bundle_ranks(const ein_bundle *bundle);
int ein_bundle_rank(const ein_bundle *bundle);

/* One line on what runs the bundle (devices, graph, libraries); it lives
 * until the next call on this bundle. */
const char *ein_bundle_describe(const ein_bundle *bundle);

/* The floating-point operations of one step of the bundle's program (as
 * the compiler counts them: docs/bundle-format.md, "FLOPs"), and the rate
 * the chip table gives the bundle's devices together for dense bf16 gemms
 * (FLOP/s; 0 for the cpu target, whose chip the table does not know): a
 * step's achieved rate against the hardware's. Under a device map, the
 * rate of the GPUs it names (ein_bundle_gpus), not of the devices. */
double ein_bundle_flops(const ein_bundle *bundle);
double ein_bundle_peak_flops(const ein_bundle *bundle);

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

/* Which input output `index` is the next value of (the manifest's
 * `updates`: a training step's updated weight or optimizer state), in
 * *input; -1 when none. */
ein_status ein_bundle_output_updates(const ein_bundle *bundle, int index,
                                     int *input);

/* Copies each output of the last run that updates an input
 * (ein_bundle_output_updates) into that input's blocks, as
 * ein_bundle_set_input would with the output's values, but on the devices:
 * block by block where the output's and the input's blocks are on this
 * process's devices (a device-to-device copy on CUDA), through the host
 * only between ranks or where an output's block is an input's too. The
 * outputs stay readable until the next run. A training loop sets the
 * weights and state once, then per step sets the batch, runs, reads the
 * loss and carries. */
ein_status ein_bundle_carry(ein_bundle *bundle);

/* How a benchmark times one step. */
typedef enum ein_timer {
  /* The devices' clock: on CUDA, events recorded on the first GPU's stream
   * before the step and after the last GPU's end (the CPU backend, which has
   * no such clock, uses the host's). */
  EIN_TIMER_DEVICE = 0,
  /* The host's steady clock around launching the step and waiting for every
   * device, as a framework that times a blocking call does (JAX's way). */
  EIN_TIMER_HOST = 1
} ein_timer;

/* Runs `warmup` untimed and then `iterations` timed steps and stores the
 * median milliseconds of one step, timed by `timer`. */
ein_status ein_bundle_bench_with(ein_bundle *bundle, ein_timer timer,
                                 int warmup, int iterations, double *median_ms);

/* ein_bundle_bench_with(bundle, EIN_TIMER_DEVICE, ...). */
ein_status ein_bundle_bench(ein_bundle *bundle, int warmup, int iterations,
                            double *median_ms);

/* The memory one device holds for the bundle, in bytes. */
typedef struct ein_memory_info {
  /* What the runtime allocated by plan: the device's arena (the manifest's
   * arena_bytes) plus the libraries' workspaces (cuBLASLt, attention). */
  size_t planned;
  /* On CUDA, how much the device's free memory (cudaMemGetInfo) has dropped
   * since just before the arena was allocated: the plan plus what the
   * libraries, the loaded kernels and the captured graph took. The CUDA
   * context itself is not counted, nor is another process's allocation
   * made meanwhile. 0 where the backend does not measure (CPU). */
  size_t measured;
} ein_memory_info;

ein_status ein_bundle_memory(const ein_bundle *bundle, int device,
                             ein_memory_info *info);

/* One step of the schedule: its device, what it does ("kernel", "gemm",
 * "attention", "transfer" or "aggregate") and its label ("" if none); the
 * strings live as long as the bundle. */
typedef struct ein_step_info {
  int device;
  const char *kind;
  const char *label;
} ein_step_info;

int ein_bundle_num_steps(const ein_bundle *bundle);
ein_status ein_bundle_step_info(const ein_bundle *bundle, int index,
                                ein_step_info *info);

/* Runs the schedule once, step by step (on CUDA eagerly, with events around
 * each step, not as the graph), and stores in step_ms[i] the milliseconds of
 * step i from when it could start on its device (its waits met, the
 * device's earlier steps done) to its end. `count` must be the number of
 * steps. Every input must have been set; the outputs are the run's. */
ein_status ein_bundle_profile(ein_bundle *bundle, double *step_ms,
                              size_t count);

/* The same profiled run as a timeline: for step i, start_ms[i] (when it
 * could start on its lane) and end_ms[i], in milliseconds since the run
 * began on the step's device (on CUDA each device's clock starts at an event
 * recorded while every device is idle; over ranks, at each rank's own run),
 * and lane[i]: 0 for the device's stream, 1 for its copy stream
 * (EIN_CUDA_STREAMS=2 or a dataflow bundle), 2 and up for a dataflow
 * bundle's further compute streams. end_ms[i] - start_ms[i] is
 * ein_bundle_profile's step_ms[i]. `count` must be the number of steps. */
ein_status ein_bundle_profile_timeline(ein_bundle *bundle, double *start_ms,
                                       double *end_ms, int *lane, size_t count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EIN_RUNTIME_H */
