//===- ein-run.cpp - Run a bundle -----------------------------------------===//
//
//   ein-run DIR [--inputs=a.npy,...] [--weights-dir=W] [--outputs=o.npy,...]
//               [--seed=S] [--check] [--bench [--warmup=2] [--iters=10]
//               [--timer=device|host]] [--profile[=FILE.json]] [--debug]
//               [--max-bytes=N] [--device-map=G0,G1,...] [--steps=N]
//
// Loads the bundle in DIR, binds its inputs (.npy files, or tensors drawn
// from the seed as docs/program-format.md says), runs it and prints one line
// per output. With --weights-dir, each weight argument i (marked "weight"
// in program.json) is read from W/arg<i>.npy (what `python3 -m einsummable
// export --weights-dir` writes) and --inputs names only the others.
// --check evaluates the bundle's program.json with the reference evaluator
// on the same inputs and prints max_rel_err=...; it exits non-zero when an
// output is further from the reference than its element type allows.
// --bench prints the median milliseconds of a step, timed by the devices'
// clock (CUDA events) or, with --timer=host, by the host's clock around a
// blocking launch (how the JAX peer times), the roofline (the program's
// FLOPs, the rate they ran at and, on CUDA, its share of the chip table's
// gemm rate on all the devices), and then each device's memory: what the
// plan allocated and, on CUDA, what cudaMemGetInfo saw go.
// --profile runs the schedule once more step by step and prints, per
// device, the milliseconds its kernels, gemms, attention, transfers and
// aggregations took (and, with --bench, how much of the step the device sat
// idle: waiting on another device, or between launches). --profile=FILE.json
// also writes that run's timeline in Chrome's trace-event format (what the
// PyTorch profiler and JAX write; it opens in Perfetto): one process per
// device, one thread per stream, each step an event named by its op and
// source line (docs/cuda-runtime.md). --debug checks every step's memory
// against its device's arena and poisons unwritten memory: an output that is
// then NaN or infinite where the reference is not exits non-zero.
// --max-bytes=N bounds the host memory the run's tensors may take (the
// inputs and outputs as float64 and as bytes, the CPU devices' arenas, and
// with --check the reference's values); by default the machine's physical
// memory. A run past it is refused before any input is read or drawn.
// --device-map=0,0,0,0 (or EIN_DEVICE_MAP, when the flag is absent) runs a
// CUDA bundle's device d on GPU d's entry: a bundle for 4 devices on one
// GPU, each device its own arena and streams there, the step still one
// CUDA graph (docs/cuda-runtime.md, "Logical devices"). Where devices share
// a GPU the run says so ("logical devices 4 on 1 GPU: timings are not those
// of 4 GPUs"), and --bench beside its figure. A cpu bundle refuses a map.
//
// --steps=N runs N steps of a training bundle (ein-compile --optimizer):
// after each step but the last, every output that updates an input (the
// weights and the optimizer's state) is carried into it on the devices
// (ein_bundle_carry), and the outputs printed and written are the last
// step's; --check evaluates the N steps alike. A bundle none of whose
// outputs updates an input refuses N > 1.
//
// A bundle for several nodes runs as one process per node under Open MPI's
// mpirun (`mpirun -n K ein-run DIR ...`): every rank runs this tool with the
// same arguments, rank 0 reads the inputs, prints, checks and writes the
// outputs, and the others only run their nodes' steps. Every run prints
// "ranks=K ..." first.
//
//===----------------------------------------------------------------------===//

#include "tool_support.h"

#include "ein/check.h"
#include "ein/eval.h"
#include "ein/runtime.h"
#include "ein/staged_file.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>

using namespace ein::tools;

namespace {

const char *kUsage =
    "usage: ein-run DIR [--inputs=a.npy,...] [--weights-dir=W] "
    "[--outputs=o.npy,...] [--seed=S]\n"
    "               [--check] [--bench [--warmup=2] [--iters=10] "
    "[--timer=device|host]]\n"
    "               [--profile[=FILE.json]] [--debug] [--max-bytes=N]\n"
    "               [--device-map=G0,G1,...] [--steps=N]\n";

/// --debug without --check: an output that is NaN or infinite where the
/// reference is not (debug mode fills memory no step wrote with NaN) is an
/// error. Only evaluates the reference when some output is not finite.
bool debugOutputsFinite(const ein::Program &program,
                        const std::vector<ein::HostTensor> &inputs,
                        const std::vector<ein::HostTensor> &outputs,
                        const ein::EvalOptions &options) {
  auto finite = [](const ein::HostTensor &t) {
    return std::all_of(t.data.begin(), t.data.end(),
                       [](double v) { return std::isfinite(v); });
  };
  if (std::all_of(outputs.begin(), outputs.end(), finite))
    return true;
  std::vector<ein::HostTensor> reference;
  std::string error;
  if (!ein::evaluate(program, inputs, reference, error, options)) {
    std::fprintf(stderr,
                 "ein-run: error: --debug: an output is not finite, and the "
                 "reference to compare it with cannot be evaluated: %s\n",
                 error.c_str());
    return false;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    int64_t k = ein::firstUnexpectedNonFinite(outputs[i], reference[i]);
    if (k < 0)
      continue;
    std::fprintf(stderr,
                 "ein-run: error: --debug: output %zu ('%s') holds %g at "
                 "element %lld, where the reference holds %g (in debug mode, "
                 "memory no step wrote reads as NaN)\n",
                 i, program.results[i].c_str(), outputs[i].data[k],
                 static_cast<long long>(k), reference[i].data[k]);
    return false;
  }
  return true;
}

/// The GPUs a device map names (--device-map=0,0,1,1 or EIN_DEVICE_MAP):
/// one CUDA device index per device of the bundle. `source` names where
/// it came from in errors.
std::vector<int> parseDeviceMap(const std::string &source,
                                const std::string &text) {
  std::vector<int> map;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma - start);
    char *end = nullptr;
    errno = 0;
    long gpu = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || !std::isdigit((unsigned char)item[0]) ||
        errno == ERANGE || gpu > std::numeric_limits<int>::max())
      die(source + "=" + text +
          ": a device map is a comma-separated list of GPU indices (0 or "
          "more), one per device of the bundle, such as 0,0,0,0; '" +
          item + "' is not one");
    map.push_back(int(gpu));
    if (comma == std::string::npos)
      return map;
    start = comma + 1;
  }
}

/// "logical devices 4 on 1 GPU: timings are not those of 4 GPUs" where a
/// device map puts several devices on one GPU; "" otherwise.
std::string foldedNotice(ein_bundle *bundle) {
  int devices = ein_bundle_devices(bundle), gpus = ein_bundle_gpus(bundle);
  if (gpus <= 0 || gpus >= devices)
    return "";
  return "logical devices " + std::to_string(devices) + " on " +
         std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
         ": timings are not those of " + std::to_string(devices) + " GPUs";
}

/// "rank R of K: " in a run of several ranks, which every error names.
std::string rankPrefix;

[[noreturn]] void fail(const std::string &message) {
  // The runtime's messages about the ranks name the rank already.
  bool named = message.compare(0, rankPrefix.size(), rankPrefix) == 0;
  die(named ? message : rankPrefix + message);
}

void check(ein_status status) {
  if (status != EIN_OK)
    fail(ein_last_error());
}

ein::HostTensor decode(const ein_tensor_info &info,
                       const std::vector<unsigned char> &bytes) {
  ein::HostTensor t;
  t.dtype = *ein::parseDType(info.dtype);
  t.shape.assign(info.shape, info.shape + info.rank);
  t.data = ein::tensorValues(t.dtype, bytes.data(),
                             bytes.size() / ein::dtypeBytes(t.dtype));
  return t;
}

/// One step-by-step run's timeline (ein_bundle_profile_timeline): per
/// step, its start and end (ms) and its lane. --profile's table and its
/// trace file both read the one run.
struct Timeline {
  std::vector<double> start, end;
  std::vector<int> lane;
};

Timeline profileRun(ein_bundle *bundle) {
  int steps = ein_bundle_num_steps(bundle);
  Timeline t{std::vector<double>(steps), std::vector<double>(steps),
             std::vector<int>(steps)};
  check(ein_bundle_profile_timeline(bundle, t.start.data(), t.end.data(),
                                    t.lane.data(), steps));
  return t;
}

/// Per device, the milliseconds of each kind of step in the profiled run,
/// their sum, and (given the benchmarked step) the rest as idle time.
void printProfile(ein_bundle *bundle, const Timeline &timeline, double stepMs) {
  const char *kinds[] = {"kernel", "gemm", "attention", "transfer",
                         "aggregate"};
  int steps = ein_bundle_num_steps(bundle);
  std::vector<double> times(steps);
  for (int i = 0; i < steps; ++i)
    times[i] = timeline.end[i] - timeline.start[i];
  int devices = ein_bundle_devices(bundle);
  std::vector<std::array<double, 5>> sums(devices, {0, 0, 0, 0, 0});
  for (int i = 0; i < steps; ++i) {
    ein_step_info info;
    check(ein_bundle_step_info(bundle, i, &info));
    for (int k = 0; k < 5; ++k)
      if (std::string(info.kind) == kinds[k])
        sums[info.device][k] += times[i];
  }
  std::printf("profile (ms per device; one step-by-step run, each step from "
              "when it could start):\n%-7s",
              "device");
  for (const char *kind : kinds)
    std::printf(" %10s", kind);
  std::printf(" %10s%s\n", "busy", stepMs >= 0 ? "       idle" : "");
  for (int d = 0; d < devices; ++d) {
    double busy = 0;
    std::printf("%-7d", d);
    for (double x : sums[d]) {
      std::printf(" %10.4f", x);
      busy += x;
    }
    std::printf(" %10.4f", busy);
    if (stepMs >= 0)
      std::printf(" %10.4f", std::max(0.0, stepMs - busy));
    std::printf("\n");
  }
}

/// A JSON string literal.
std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\u%04x", c);
      out += hex;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// One profiled run as Chrome trace events ("X" events in microseconds;
/// "M" events naming each device's process and streams), written whole to
/// `path` (through a staging file of its own renamed over it,
/// ein/staged_file.h, so a failed write leaves what was there).
void writeTrace(ein_bundle *bundle, const Timeline &timeline,
                const std::string &path) {
  int steps = ein_bundle_num_steps(bundle);
  const std::vector<double> &start = timeline.start, &end = timeline.end;
  const std::vector<int> &lane = timeline.lane;
  std::string text = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  int devices = ein_bundle_devices(bundle);
  // Lanes: 0 the device's stream, 1 its copy stream, 2.. its further
  // compute streams (a dataflow bundle).
  int lanes = 1;
  for (int i = 0; i < steps; ++i)
    lanes = std::max(lanes, lane[i] + 1);
  char line[512];
  for (int d = 0; d < devices; ++d) {
    std::snprintf(line, sizeof(line),
                  "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": "
                  "%d, \"tid\": 0, \"args\": {\"name\": \"device %d\"}},\n",
                  d, d);
    text += line;
    for (int t = 0; t < lanes; ++t) {
      std::string name = t == 0   ? "stream"
                         : t == 1 ? "copy stream"
                                  : "stream " + std::to_string(t);
      std::snprintf(line, sizeof(line),
                    "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": "
                    "%d, \"tid\": %d, \"args\": {\"name\": \"%s\"}},\n",
                    d, t, name.c_str());
      text += line;
    }
  }
  for (int i = 0; i < steps; ++i) {
    ein_step_info info;
    check(ein_bundle_step_info(bundle, i, &info));
    std::string name = info.label && *info.label
                           ? std::string(info.label)
                           : std::string(info.kind) + " #" + std::to_string(i);
    std::snprintf(line, sizeof(line),
                  "\"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %d, "
                  "\"tid\": %d, \"args\": {\"step\": %d}}",
                  start[i] * 1000.0, (end[i] - start[i]) * 1000.0, info.device,
                  lane[i], i);
    text += "{\"name\": " + jsonString(name) +
            ", \"cat\": " + jsonString(info.kind) + ", " + line +
            (i + 1 < steps ? ",\n" : "\n");
  }
  text += "]}\n";
  ein::StagedFile file(path);
  if (!file.open() || !file.write(text.data(), text.size()) || !file.commit())
    fail("--profile: cannot write '" + path +
         "': " + std::strerror(file.errorNumber()));
}

/// The host memory rank 0's run takes for its tensors: each input and
/// output as float64 values and as bytes, the arenas of its CPU devices
/// (mapped at load, touched by the run), and, with `reference`, what the
/// reference evaluator keeps (its copy of the inputs, every op's result,
/// the results returned).
uint64_t hostBytes(ein_bundle *bundle, const ein::Program &program,
                   bool reference) {
  uint64_t bytes = 0;
  for (const ein::Argument &arg : program.arguments)
    bytes = addBytes(bytes, float64Bytes(arg.type) + denseBytes(arg.type));
  for (int i = 0; i < ein_bundle_num_outputs(bundle); ++i) {
    ein_tensor_info info;
    check(ein_bundle_output_info(bundle, i, &info));
    uint64_t elements =
        info.bytes / ein::dtypeBytes(*ein::parseDType(info.dtype));
    bytes = addBytes(bytes, info.bytes + elements * sizeof(double));
  }
  if (std::string(ein_bundle_target(bundle)) == "cpu") {
    // Over ranks, rank 0 holds node 0's devices.
    int devices = ein_bundle_devices(bundle);
    int local = ein_bundle_ranks(bundle) > 1
                    ? devices / ein_bundle_nodes(bundle)
                    : devices;
    for (int d = 0; d < local; ++d) {
      ein_memory_info memory;
      check(ein_bundle_memory(bundle, d, &memory));
      bytes = addBytes(bytes, memory.planned);
    }
  }
  if (reference)
    bytes = addBytes(bytes, evaluatorBytes(program));
  return bytes;
}

/// A rank other than 0: takes part in every collective call rank 0 makes,
/// in the same order, with no data of its own to give or keep.
/// `bench` says whether to benchmark, with rank 0's timer, warmup and
/// iterations.
int runOtherRank(ein_bundle *bundle, const CommandLine &line, bool bench,
                 ein_timer timer, int warmup, int iters, uint64_t steps) {
  for (int i = 0; i < ein_bundle_num_inputs(bundle); ++i)
    check(ein_bundle_set_input(bundle, i, nullptr, 0));
  check(ein_bundle_run(bundle));
  for (uint64_t s = 1; s < steps; ++s) {
    check(ein_bundle_carry(bundle));
    check(ein_bundle_run(bundle));
  }
  for (int i = 0; i < ein_bundle_num_outputs(bundle); ++i)
    check(ein_bundle_get_output(bundle, i, nullptr, 0));
  if (bench) {
    double ms = 0;
    check(ein_bundle_bench_with(bundle, timer, warmup, iters, &ms));
  }
  if (line.flags.count("profile"))
    profileRun(bundle);
  ein_bundle_free(bundle);
  return 0;
}

int run(int argc, char **argv) {
  CommandLine line =
      parseCommandLine(argc, argv, kUsage,
                       {"inputs", "weights-dir", "outputs", "seed", "warmup",
                        "iters", "timer", "max-bytes", "device-map", "steps"},
                       {"check", "bench", "profile", "debug"}, {"profile"});
  if (line.positional.empty())
    die(std::string("no bundle given\n") + kUsage);
  if (line.positional.size() > 1)
    die("more than one bundle given ('" + line.positional[0] + "' and '" +
        line.positional[1] + "')");
  bool bench = line.flags.count("bench");
  if (!bench && (line.has("warmup") || line.has("iters") || line.has("timer")))
    die("--warmup, --iters and --timer go with --bench");
  ein_timer timer = EIN_TIMER_DEVICE;
  if (line.has("timer")) {
    const std::string &name = line.values.at("timer");
    if (name == "host")
      timer = EIN_TIMER_HOST;
    else if (name != "device")
      die("--timer must be 'device' or 'host', not '" + name + "'");
  }
  auto list = [&](const char *key) {
    return line.values.count(key) ? splitList(key, line.values.at(key))
                                  : std::vector<std::string>();
  };
  std::vector<std::string> inputFiles = list("inputs"),
                           outputFiles = list("outputs");
  auto count = [&](const char *key, uint64_t fallback, uint64_t max) {
    return line.values.count(key) ? parseCount(key, line.values.at(key), max)
                                  : fallback;
  };
  uint64_t seed = count("seed", 0, UINT64_MAX);
  int warmup = static_cast<int>(count("warmup", 2, 1000000));
  int iters = static_cast<int>(count("iters", 10, 1000000));
  if (iters < 1)
    die("--iters must be at least 1");
  uint64_t steps = count("steps", 1, 1000000);
  if (steps < 1)
    die("--steps must be at least 1");
  MemoryLimit limit = memoryLimit(line);

  // Seconds since `from` on the host's steady clock: where startup goes.
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point from) {
    return std::chrono::duration<double>(Clock::now() - from).count();
  };
  Clock::time_point started = Clock::now();
  ein_load_options options = {};
  options.debug = line.flags.count("debug") ? 1 : 0;
  // The device map: the flag, else the environment's (for scripts).
  std::string mapSource, mapText;
  if (line.has("device-map")) {
    mapSource = "--device-map";
    mapText = line.values.at("device-map");
  } else if (const char *env = std::getenv("EIN_DEVICE_MAP")) {
    mapSource = "EIN_DEVICE_MAP";
    mapText = env;
  }
  std::vector<int> deviceMap;
  if (!mapSource.empty()) {
    deviceMap = parseDeviceMap(mapSource, mapText);
    options.device_map_size = int(deviceMap.size());
    options.device_map = deviceMap.data();
  }
  ein_bundle *bundle = nullptr;
  if (ein_bundle_load_with(line.positional[0].c_str(), &options, sizeof options,
                           &bundle) != EIN_OK) {
    std::string error = ein_last_error();
    // The runtime's word on the map, named as the user gave it.
    if (!mapSource.empty() && error.rfind("the device map", 0) == 0)
      fail(mapSource + "=" + mapText + ": " + error);
    fail(error);
  }
  double loadSeconds = seconds(started);
  // Which input each output carries into between steps (-1: none).
  std::vector<int> updates(ein_bundle_num_outputs(bundle), -1);
  for (size_t i = 0; i < updates.size(); ++i)
    check(ein_bundle_output_updates(bundle, static_cast<int>(i), &updates[i]));
  if (steps > 1 &&
      std::all_of(updates.begin(), updates.end(), [](int k) { return k < 0; }))
    fail("--steps=" + std::to_string(steps) +
         ": no output of the bundle updates an input, so there is nothing to "
         "carry between steps (a training step: ein-compile --optimizer)");
  int rank = ein_bundle_rank(bundle), ranks = ein_bundle_ranks(bundle);
  if (ranks > 1)
    rankPrefix =
        "rank " + std::to_string(rank) + " of " + std::to_string(ranks) + ": ";
  if (rank != 0)
    return runOtherRank(bundle, line, bench, timer, warmup, iters, steps);
  std::printf("ranks=%d nodes=%d devices=%d\n", ranks, ein_bundle_nodes(bundle),
              ein_bundle_devices(bundle));
  std::string folded = foldedNotice(bundle);
  if (!folded.empty())
    std::printf("%s\n", folded.c_str());

  // The program's arguments carry the names and types the inputs must have;
  // readBundle checked that they match the manifest.
  ein::Program program;
  std::string error;
  if (!ein::readProgram(line.positional[0] + "/program.json", program, error))
    fail(error);
  if (line.has("weights-dir")) {
    // Weights from the directory, the other arguments from --inputs (or
    // drawn from the seed): one file name per argument, "" for drawn.
    std::string dir = line.values.at("weights-dir");
    std::vector<std::string> files, activations = inputFiles;
    size_t activationCount = 0;
    for (const ein::Argument &arg : program.arguments)
      activationCount += arg.weight ? 0 : 1;
    checkFileCount("inputs", activations, activationCount, program.function,
                   "takes", "non-weight arguments");
    size_t next = 0;
    for (size_t i = 0; i < program.arguments.size(); ++i) {
      if (program.arguments[i].weight)
        files.push_back(dir + "/arg" + std::to_string(i) + ".npy");
      else
        files.push_back(activations.empty() ? "" : activations[next++]);
    }
    inputFiles = std::move(files);
  } else {
    checkFileCount("inputs", inputFiles, program.arguments.size(),
                   program.function, "takes", "arguments");
  }
  checkFileCount("outputs", outputFiles, program.results.size(),
                 program.function, "has", "results");
  refuseOverwrites("outputs", outputFiles, inputFiles, line.positional[0]);
  if (line.values.count("profile")) {
    std::vector<std::string> reads = inputFiles;
    reads.insert(reads.end(), outputFiles.begin(), outputFiles.end());
    refuseOverwrites("profile", {line.values.at("profile")}, reads,
                     line.positional[0]);
  }

  ein::EvalOptions evalOptions;
  int64_t maxElements = line.flags.count("check")
                            ? evalOptions.maxElements
                            : std::numeric_limits<int64_t>::max();
  checkArguments(program, maxElements, limit);
  checkHostBytes("running '" + program.function + "'",
                 hostBytes(bundle, program, line.flags.count("check")),
                 std::string("its inputs and outputs as float64 and in their "
                             "element types, the CPU devices' arenas") +
                     (line.flags.count("check")
                          ? ", and the reference evaluation's values"
                          : ""),
                 limit);
  Clock::time_point drawing = Clock::now();
  std::vector<ein::HostTensor> inputs =
      loadInputs(program, inputFiles, seed, maxElements);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<unsigned char> bytes = ein::tensorBytes(inputs[i]);
    check(ein_bundle_set_input(bundle, static_cast<int>(i), bytes.data(),
                               bytes.size()));
  }
  double inputSeconds = seconds(drawing);

  Clock::time_point firstRun = Clock::now();
  check(ein_bundle_run(bundle));
  double firstRunSeconds = seconds(firstRun);
  for (uint64_t s = 1; s < steps; ++s) {
    check(ein_bundle_carry(bundle));
    check(ein_bundle_run(bundle));
  }
  std::vector<ein::HostTensor> outputs;
  for (int i = 0; i < ein_bundle_num_outputs(bundle); ++i) {
    ein_tensor_info info;
    check(ein_bundle_output_info(bundle, i, &info));
    std::vector<unsigned char> bytes(info.bytes);
    check(ein_bundle_get_output(bundle, i, bytes.data(), bytes.size()));
    outputs.push_back(decode(info, bytes));
    printResult(i, program.results[i], outputs.back());
  }
  writeOutputs(outputFiles, outputs);

  // The reference is evaluated on rank 0 alone; in a run of several ranks
  // that comes after the collective calls, so no rank waits on it (a long
  // evaluation is not a hung rank).
  int status = 0;
  // The reference's inputs of the last step: the steps before it
  // evaluated and their updated outputs carried, as the runtime does.
  auto lastStepInputs = [&] {
    std::vector<ein::HostTensor> at = inputs, reference;
    for (uint64_t s = 1; s < steps; ++s) {
      if (!ein::evaluate(program, at, reference, error, evalOptions))
        fail("the reference evaluator failed at step " + std::to_string(s) +
             ": " + error);
      for (size_t i = 0; i < updates.size(); ++i)
        if (updates[i] >= 0)
          at[updates[i]] = reference[i];
    }
    return at;
  };
  auto verify = [&] {
    if (options.debug && !line.flags.count("check") &&
        !debugOutputsFinite(program, steps > 1 ? lastStepInputs() : inputs,
                            outputs, evalOptions))
      status = 1;
    if (line.flags.count("check")) {
      std::vector<ein::HostTensor> reference;
      if (!ein::evaluate(program, steps > 1 ? lastStepInputs() : inputs,
                         reference, error, evalOptions))
        fail("the reference evaluator failed: " + error);
      double worst = 0;
      std::vector<std::string> failures;
      for (size_t i = 0; i < outputs.size(); ++i) {
        double err = ein::maxRelativeError(outputs[i], reference[i]);
        double threshold = ein::checkThreshold(outputs[i].dtype);
        worst = std::max(worst, err);
        if (err > threshold) {
          char line[256];
          std::snprintf(line, sizeof line,
                        "output %zu ('%s') differs from the reference: "
                        "max_rel_err=%.3g exceeds the %s threshold %.3g",
                        i, program.results[i].c_str(), err,
                        ein::dtypeName(outputs[i].dtype), threshold);
          failures.push_back(line);
        }
      }
      std::printf("max_rel_err=%.3g\n", worst);
      std::fflush(stdout);
      for (const std::string &failure : failures)
        std::fprintf(stderr, "ein-run: error: %s\n", failure.c_str());
      status = failures.empty() ? 0 : 1;
    }
  };
  if (ranks == 1)
    verify();

  double ms = 0;
  if (bench) {
    check(ein_bundle_bench_with(bundle, timer, warmup, iters, &ms));
    std::printf("median_ms=%.4f (target %s, %d devices, warmup %d, iters "
                "%d, %s clock%s%s)\n%s\n",
                ms, ein_bundle_target(bundle), ein_bundle_devices(bundle),
                warmup, iters, timer == EIN_TIMER_HOST ? "host" : "device",
                folded.empty() ? "" : "; ", folded.c_str(),
                ein_bundle_describe(bundle));
    // Where the seconds before the timed runs went: loading (kernels,
    // library plans), the inputs (drawn or read, then set), the first run.
    std::printf("startup_s load=%.2f inputs=%.2f first_run=%.2f\n", loadSeconds,
                inputSeconds, firstRunSeconds);
    // The roofline: the program's FLOPs over the step, against the chip
    // table's gemm rate where the target has one.
    double flops = ein_bundle_flops(bundle),
           peak = ein_bundle_peak_flops(bundle);
    std::printf("roofline flops=%.4g tflop_per_s=%.4g", flops,
                ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0.0);
    if (peak > 0 && ms > 0)
      std::printf(" of_peak=%.3f (%d x %.0f TFLOP/s, the chip table's bf16 "
                  "gemm rate)",
                  flops / (ms * 1e-3) / peak, ein_bundle_gpus(bundle),
                  peak / ein_bundle_gpus(bundle) / 1e12);
    std::printf("\n");
    for (int d = 0; d < ein_bundle_devices(bundle); ++d) {
      ein_memory_info memory;
      check(ein_bundle_memory(bundle, d, &memory));
      std::printf("memory device=%d planned_mib=%.1f", d,
                  memory.planned / 1048576.0);
      if (memory.measured)
        std::printf(" measured_mib=%.1f", memory.measured / 1048576.0);
      std::printf("\n");
    }
  }
  if (line.flags.count("profile")) {
    Timeline timeline = profileRun(bundle);
    printProfile(bundle, timeline, bench ? ms : -1);
    if (line.values.count("profile"))
      writeTrace(bundle, timeline, line.values.at("profile"));
  }
  ein_bundle_free(bundle);
  if (ranks > 1)
    verify();
  return status;
}

} // namespace

int main(int argc, char **argv) {
  setToolName("ein-run");
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    die("out of host memory");
  } catch (const std::exception &e) {
    die(std::string("internal error: ") + e.what());
  }
}
