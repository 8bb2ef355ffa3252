// vouch ncu: a per-kernel table from an Nsight Compute CSV export.
#include <fmt/format.h>

#include <cstdio>

#include "command.h"
#include "common.h"
#include "ncu/ncu_csv.h"
#include "util/json_io.h"

namespace vouch::cli {

int CmdNcu(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{"Per-kernel table from an Nsight Compute CSV export (raw or details page)", "ncu"};
  std::string file, markdown;
  bool json = false;
  app.add_option("FILE", file, "ncu --csv output (details page) or ncu --csv --page raw output")
      ->required();
  app.add_flag("--json", json, "print JSON for machines");
  AddMarkdownOption(app, markdown, "the table");
  if (int rc = Parse(app, std::move(args)); rc >= 0) return rc;
  auto r = ncu::ReadNcuCsv(file);
  if (!r.ok()) {
    fmt::print(stderr, "vouch ncu: {}\n", r.error().message);
    return kExitError;
  }
  if (!WriteMarkdownFile(
          markdown, [&] { return ncu::RenderNcuMarkdown(*r); }, "ncu"))
    return kExitError;
  const auto print = [](std::string_view piece) {
    std::fwrite(piece.data(), 1, piece.size(), stdout);
  };
  if (json)
    ncu::WriteNcuJson(*r, print);
  else if (markdown == "-")
    fmt::print("{}", ncu::RenderNcuMarkdown(*r));
  else
    ncu::WriteNcuText(*r, print);
  return kExitOk;
}

}  // namespace vouch::cli
