// Slurm through its own tools (sbatch, scontrol, squeue, sacct, scancel): the command lines
// vouch builds, the parsers of what they print, and one bounded way to run them. The
// parsers are pure; only RunTool touches the world.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace vouch {

// What the user asks of the cluster; each empty field is left to Slurm's defaults.
struct SlurmOptions {
  std::string partition, gres, account, time, exclude;
  std::vector<std::string> extra;  // --sbatch-arg, given to sbatch as they are
};

// sbatch for a job array of TASKS tasks, each a whole node (--exclusive, one task per node at
// a time, so a node's GPUs and its lock are the task's own), running SCRIPT. OUTPUT is the
// per-task log pattern (%A_%a).
std::vector<std::string> SbatchArgv(const SlurmOptions& o, const std::string& job_name, int tasks,
                                    const std::string& output, const std::string& script);

// The job id in `sbatch --parsable` output ("123" or "123;cluster"); an error otherwise.
Result<std::string> ParseSbatchJobId(const std::string& out);

// One array task as Slurm reports it.
struct SlurmTask {
  std::string array_job_id;  // the id sbatch printed
  int task = -1;             // SLURM_ARRAY_TASK_ID
  std::string state;         // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, NODE_FAIL,
                             // PREEMPTED, TIMEOUT, OUT_OF_MEMORY, REQUEUED, ...
  std::string reason;        // scontrol's Reason (None when none)
  std::string exit_code;     // "0:0" (code:signal)
  std::string node;          // NodeList (empty while pending)
  int restarts = 0;          // requeues
};

// `scontrol show job -o ID` (one job per line, KEY=VALUE words). Pending tasks not yet split
// from the array are given as one line with ArrayTaskId=0-3,5 (a %N throttle is ignored):
// each task is returned on its own.
std::vector<SlurmTask> ParseScontrolJobs(const std::string& text);
// `sacct -n -P -X -j ID -o JobID,State,ExitCode,NodeList` ("123_4|COMPLETED|0:0|n1").
std::vector<SlurmTask> ParseSacct(const std::string& text);
// No more change will come (the task ended, for good or ill).
bool SlurmStateFinal(const std::string& state);

// The GPUs Slurm gave the job, as CUDA_VISIBLE_DEVICES for vouch's GPU rules
// (telemetry/gpu_select.h). Slurm sets CUDA_VISIBLE_DEVICES itself when it allocates gres
// GPUs; when it is unset but SLURM_STEP_GPUS (srun) or SLURM_JOB_GPUS (sbatch) is, those
// (node GPU indices) are used. nullopt when none of them is set: then every GPU is sampled.
struct SlurmGpus {
  std::string cuda_visible_devices;
  std::string source;  // "CUDA_VISIBLE_DEVICES (set by Slurm)", "SLURM_STEP_GPUS", ...
};
std::optional<SlurmGpus> GpusFromSlurm(
    const std::function<std::optional<std::string>(const std::string&)>& getenv);

// Runs ARGV (PATH looked up, never a shell) with stdin from /dev/null, capturing stdout and
// stderr together (at most 1 MiB), killed after TIMEOUT_S. The output; *RC is the exit status
// (or 128 + signal). An error when the program cannot be started or times out.
Result<std::string> RunTool(const std::vector<std::string>& argv, double timeout_s, int* rc);

}  // namespace vouch
