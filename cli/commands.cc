// The one table of subcommands. Add a command here and its file in cli/CMakeLists.txt.
#include "command.h"

namespace vouch::cli {

// One declaration per cmd_*.cc file.
int CmdDoctor(const GlobalOptions&, std::vector<std::string>);
int CmdClockSample(const GlobalOptions&, std::vector<std::string>);
int CmdClockCheck(const GlobalOptions&, std::vector<std::string>);
int CmdClockPair(const GlobalOptions&, std::vector<std::string>);
int CmdClockReplay(const GlobalOptions&, std::vector<std::string>);
int CmdLockStatus(const GlobalOptions&, std::vector<std::string>);
int CmdRun(const GlobalOptions&, std::vector<std::string>);
int CmdShow(const GlobalOptions&, std::vector<std::string>);
int CmdBaseline(const GlobalOptions&, std::vector<std::string>);
int CmdGate(const GlobalOptions&, std::vector<std::string>);
int CmdArms(const GlobalOptions&, std::vector<std::string>);
int CmdAb(const GlobalOptions&, std::vector<std::string>);
int CmdTraceSummarize(const GlobalOptions&, std::vector<std::string>);
int CmdTraceDiff(const GlobalOptions&, std::vector<std::string>);
int CmdNcu(const GlobalOptions&, std::vector<std::string>);
int CmdHistoryAdd(const GlobalOptions&, std::vector<std::string>);
int CmdHistoryList(const GlobalOptions&, std::vector<std::string>);
int CmdHistoryShow(const GlobalOptions&, std::vector<std::string>);
int CmdHistoryTrend(const GlobalOptions&, std::vector<std::string>);
int CmdReport(const GlobalOptions&, std::vector<std::string>);
int CmdFleetAb(const GlobalOptions&, std::vector<std::string>);
int CmdFleetRun(const GlobalOptions&, std::vector<std::string>);
int CmdFleetGate(const GlobalOptions&, std::vector<std::string>);
int CmdFleetBaseline(const GlobalOptions&, std::vector<std::string>);
int CmdFleetWorker(const GlobalOptions&, std::vector<std::string>);
int CmdFleetMerge(const GlobalOptions&, std::vector<std::string>);
int CmdBisect(const GlobalOptions&, std::vector<std::string>);

const std::vector<Command>& Commands() {
  static const std::vector<Command> table = {
      {"doctor", "readiness report: is this machine fit to measure?", CmdDoctor},
      {"clock sample", "run a command inside a judged clock window", CmdClockSample},
      {"clock check", "judge a saved window summary", CmdClockCheck},
      {"clock pair", "can two saved windows be compared?", CmdClockPair},
      {"clock replay", "fold and judge a recorded telemetry stream", CmdClockReplay},
      {"lock status", "who holds the measurement lock", CmdLockStatus},
      {"run", "run a benchmark in guarded legs and write a record", CmdRun},
      {"show", "print a record's summary again", CmdShow},
      {"baseline", "pin a baseline from cold trials", CmdBaseline},
      {"gate", "compare a run or record with a baseline (CI gate)", CmdGate},
      {"arms", "check that two arms are really two arms", CmdArms},
      {"ab", "is B faster than A? paired, counterbalanced legs and a verdict", CmdAb},
      {"trace summarize", "where the time goes in a profile (Kineto JSON or nsys SQLite)",
       CmdTraceSummarize},
      {"trace diff", "two profiles side by side per component and kernel", CmdTraceDiff},
      {"ncu", "per-kernel table from an Nsight Compute CSV export", CmdNcu},
      {"history add", "add run records to the history store", CmdHistoryAdd},
      {"history list", "list the stored runs", CmdHistoryList},
      {"history show", "print a stored run again", CmdHistoryShow},
      {"history trend", "a metric across commits, with the steps found in it", CmdHistoryTrend},
      {"report", "one self-contained HTML report: a run, an A/B, a gate, a trend or a trace",
       CmdReport},
      {"fleet ab", "vouch ab over Slurm nodes: node-local pairs, one merged verdict", CmdFleetAb},
      {"fleet run", "vouch run on every node of a Slurm job array, merged", CmdFleetRun},
      {"fleet gate", "vouch gate on every node; which node (and GPU) fails", CmdFleetGate},
      {"fleet baseline", "a baseline per node over Slurm (a fleet baseline)", CmdFleetBaseline},
      {"fleet worker", "one array task of a fleet plan on this node (run by the jobs)",
       CmdFleetWorker},
      {"fleet merge", "merge a fleet run directory into one record and verdict", CmdFleetMerge},
      {"bisect", "which commit made it slower? git bisect by paired A/B, error rate held",
       CmdBisect},
  };
  return table;
}

}  // namespace vouch::cli
