#include "ncu/csv.h"

#include <array>
#include <cstring>

#include "util/bounded_file.h"

namespace vouch::ncu {
namespace {

// The bytes that end an unquoted field's fast path.
constexpr std::array<bool, 256> kSpecial = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {',', '\n', '"', '\r'}) t[c] = true;
  return t;
}();

}  // namespace

// Anything the fast paths do not take: quotes that open mid-field, doubled quotes, carriage
// returns, a field cut by the end of the bytes so far. Same rules as RFC 4180 plus what
// Nsight Compute and spreadsheets write: a '\r' outside quotes is dropped, text after a
// closing quote joins the field.
const char* CsvReader::SlowField(const char* p, const char* end, bool eof, bool* content,
                                 std::size_t* lines, bool* more) {
  if (scratch_used_ == scratch_.size()) scratch_.emplace_back();
  std::string& s = scratch_[scratch_used_++];
  s.clear();
  bool in_quotes = false;
  const char* r = p;
  for (; r < end; ++r) {
    const char c = *r;
    if (in_quotes) {
      if (c == '"') {
        if (r + 1 < end) {
          if (r[1] == '"') {
            s += '"';
            ++r;
          } else {
            in_quotes = false;
          }
        } else if (!eof) {
          *more = true;  // a doubled quote or the closing one: the next byte says
          return r;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++*lines;
        s += c;
      }
      continue;
    }
    if (c == '"') {
      in_quotes = true;
      quote_line_ = line_ + *lines;
      *content = true;
    } else if (c == ',' || c == '\n') {
      return r;
    } else if (c != '\r') {
      s += c;
      *content = true;
    }
  }
  if (in_quotes) {
    if (!eof) *more = true;
    open_quote_ = eof;
  }
  return r;
}

CsvReader::Step CsvReader::ReadRow(const char* p, const char* end, bool eof, const char** next,
                                   std::size_t* lines) {
  fields_.clear();
  scratch_used_ = 0;
  *lines = 0;
  for (const char* q = p;;) {
    bool content = false, fast = false;
    std::string_view f;
    const char* stop = nullptr;
    if (q < end && *q == '"') {  // "field", or "field" at the line end: ncu quotes every field
      // A byte loop, not memchr: a field is a few bytes, and the line breaks are counted
      // on the way.
      const char* close = q + 1;
      std::size_t breaks = 0;
      while (close < end && *close != '"') breaks += *close++ == '\n';
      if (end - close > 1 && (close[1] == ',' || close[1] == '\n')) {
        f = std::string_view(q + 1, static_cast<std::size_t>(close - q - 1));
        *lines += breaks;
        content = fast = true;
        stop = close + 1;
      }
    } else {
      const char* r = q;
      while (r < end && !kSpecial[static_cast<unsigned char>(*r)]) ++r;
      if (r < end && (*r == ',' || *r == '\n')) {
        f = std::string_view(q, static_cast<std::size_t>(r - q));
        content = r > q;
        fast = true;
        stop = r;
      }
    }
    if (!fast) {
      bool more = false;
      stop = SlowField(q, end, eof, &content, lines, &more);
      if (more) return Step::kMore;
      f = scratch_[scratch_used_ - 1];
    }
    const bool only = fields_.empty() && !content && f.empty();  // nothing on the line yet
    if (stop == end) {                                           // the bytes end inside the row
      if (!eof) return Step::kMore;
      *next = end;
      if (only) return Step::kBlank;
      fields_.push_back(f);
      return Step::kRow;
    }
    if (*stop == ',') {
      fields_.push_back(f);
      q = stop + 1;
      continue;
    }
    ++*lines;  // the '\n' that ends the row
    *next = stop + 1;
    if (only) return Step::kBlank;
    fields_.push_back(f);
    return Step::kRow;
  }
}

Status CsvReader::Parse(std::string_view src, bool eof, const RowSink& row, std::size_t* used) {
  const char* p = src.data();
  const char* end = p + src.size();
  while (p < end) {
    const char* next = nullptr;
    std::size_t lines = 0;
    const Step step = ReadRow(p, end, eof, &next, &lines);
    if (step == Step::kMore) break;
    if (open_quote_)
      return MakeError(
          "{}: a quoted CSV field that starts on line {} never ends: the file is truncated", label_,
          quote_line_);
    if (step == Step::kRow)
      if (auto s = row(fields_, line_); !s) return s;
    line_ += lines;
    p = next;
  }
  *used = static_cast<std::size_t>(p - src.data());
  return OkStatus();
}

Status CsvReader::Feed(std::string_view data, const RowSink& row) {
  // A row the last chunk cut: completed with the bytes up to the next line end (a row holds
  // a line break only inside quotes), so the rest of the chunk is read in place, not copied.
  // A row still open is tried again once its bytes have doubled: a long row costs a few
  // passes over it, not one per line or chunk.
  while (!pending_.empty() && !data.empty()) {
    std::size_t take = data.find('\n');
    take = take == std::string_view::npos ? data.size() : take + 1;
    pending_.append(data.substr(0, take));
    data.remove_prefix(take);
    if (pending_.size() < retry_at_) continue;
    std::size_t used = 0;
    if (auto s = Parse(pending_, false, row, &used); !s) return s;
    pending_.erase(0, used);
    retry_at_ = pending_.empty() ? 0 : 2 * pending_.size();
  }
  if (pending_.empty()) {
    std::size_t used = 0;
    if (auto s = Parse(data, false, row, &used); !s) return s;
    pending_.assign(data.substr(used));
  }
  if (pending_.size() > max_row_)
    return MakeError(
        "{}:{}: a CSV row of more than {} (a quoted field that never ends, or not a CSV export)",
        label_, line_, DescribeSize(max_row_));
  return OkStatus();
}

Status CsvReader::Finish(const RowSink& row) {
  std::size_t used = 0;
  auto s = Parse(pending_, true, row, &used);
  pending_.clear();
  return s;
}

Result<std::vector<CsvRow>> ParseCsv(std::string_view text, const std::string& label,
                                     std::vector<std::size_t>* row_lines) {
  std::vector<CsvRow> rows;
  if (row_lines) row_lines->clear();
  CsvReader reader(label);
  const CsvReader::RowSink keep = [&](const CsvFields& fields, std::size_t line) -> Status {
    rows.emplace_back(fields.begin(), fields.end());
    if (row_lines) row_lines->push_back(line);
    return OkStatus();
  };
  if (auto s = reader.Feed(text, keep); !s) return s.error();
  if (auto s = reader.Finish(keep); !s) return s.error();
  return rows;
}

}  // namespace vouch::ncu
