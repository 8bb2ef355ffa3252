#include "leg_notes.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "util/strings.h"

namespace vouch::cli {
namespace {

// Up to MAX_BYTES from the end (FROM_END) or the start of PATH; "" when it cannot be read.
std::string ReadPart(const std::string& path, size_t max_bytes, bool from_end, bool* cut) {
  *cut = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return "";
  std::string out;
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size > 0) {
    const off_t start =
        from_end && size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
    *cut = start > 0;
    out.resize(std::min(max_bytes, static_cast<size_t>(size)));
    const ssize_t n = ::pread(fd, out.data(), out.size(), start);
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  ::close(fd);
  return out;
}

std::string Visible(std::string_view line) {
  std::string out;
  for (unsigned char c : line) {
    if (c == '\t' || c >= 0x20) {
      out += c == 0x7f ? std::string("\\x7f") : std::string(1, static_cast<char>(c));
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

}  // namespace

std::string TailForTerminal(const std::string& path, int max_lines, size_t max_bytes) {
  bool cut = false;
  std::string text = ReadPart(path, max_bytes, true, &cut);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) return "";
  std::vector<std::string> lines = Split(text, '\n');
  if (cut && lines.size() > 1) lines.erase(lines.begin());  // the first one is cut short
  const size_t keep = std::min(lines.size(), static_cast<size_t>(max_lines));
  std::string out;
  for (size_t i = lines.size() - keep; i < lines.size(); ++i)
    out += "  | " + Visible(lines[i]) + "\n";
  return out;
}

std::string FirstLineForTerminal(const std::string& path, size_t max_chars) {
  bool cut = false;
  std::string text = ReadPart(path, max_chars + 1, false, &cut);
  text = text.substr(0, text.find('\n'));
  const bool longer = text.size() > max_chars;
  if (longer) text.resize(max_chars);
  return text.empty() ? "" : Visible(text) + (longer ? "..." : "");
}

bool HasOwnMetric(const LegRecord& leg) {
  return std::any_of(leg.metrics.begin(), leg.metrics.end(), [](const Metric& m) {
    return !StartsWith(m.name, "vouch.") && !StartsWith(m.name, "gpu.");
  });
}

std::optional<std::string> WarmupTooShort(const LegRecord& leg) {
  if (!leg.result.Succeeded() || leg.window.verdict.status == WindowStatus::kValid)
    return std::nullopt;
  const int floor = leg.window.policy.min_busy_readings;
  for (const auto& g : leg.window.gpus) {
    const Fold& f = g.fold;
    if (f.readings >= floor || f.busy_readings >= floor) continue;
    // A window too short to measure the period has the policy's (the driver's known one).
    const double period_s =
        f.update_period_s > 0 ? f.update_period_s : leg.window.policy.default_update_period_s;
    const double need_s = floor * period_s;
    return fmt::format(
        "the warm-up's window (GPU {}) held only {} readings in all ({:.0f} ms apart), fewer than "
        "the {} busy readings the policy needs: every leg as short as this one ({:.2f} s) would be "
        "refused for the same reason. Make each leg run longer than about {:.1f} s of GPU work "
        "(more iterations), or lower the floor with --min-busy-readings N (recorded in the "
        "record's policy); --keep-going runs the measured legs anyway",
        f.gpu, f.readings, 1000 * period_s, floor, static_cast<double>(leg.result.wall_ns) / 1e9,
        need_s);
  }
  return std::nullopt;
}

std::string FirstLegProblem(const LegRecord& leg) {
  if (!leg.result.Succeeded() || leg.metrics_error.empty()) return "";
  return "its metrics could not be read, and every leg's would fail the same way: " +
         leg.metrics_error;
}

}  // namespace vouch::cli
