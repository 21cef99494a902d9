#include "bench/train_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/file_io.h"

namespace octet {

namespace {

// Numbers with four significant digits (enough for timings on a busy
// machine) or as whole numbers from 1000 on, integers as they are; strings as
// they are; null as "-".
std::string cell_text(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number()) {
    const double d = v.get<double>();
    if (!std::isfinite(d)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, std::fabs(d) >= 1000 ? "%.0f" : "%.4g", d);
    return buf;
  }
  return v.dump();
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string markdown_rows(const ResultTable& t, const std::string& group) {
  std::string md = "|";
  for (const std::string& c : t.columns) md += " " + c + " |";
  md += "\n|";
  for (size_t i = 0; i < t.columns.size(); ++i) md += " --- |";
  md += "\n";
  for (const nlohmann::json& row : t.rows) {
    if (!t.group_column.empty() && row.value(t.group_column, std::string()) != group) continue;
    md += "|";
    for (const std::string& c : t.columns) md += " " + cell_text(row.value(c, nlohmann::json())) + " |";
    md += "\n";
  }
  return md;
}

}  // namespace

std::string table_csv(const ResultTable& t) {
  std::string csv;
  for (size_t i = 0; i < t.columns.size(); ++i) csv += (i ? "," : "") + csv_field(t.columns[i]);
  csv += "\n";
  for (const nlohmann::json& row : t.rows) {
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const nlohmann::json v = row.value(t.columns[i], nlohmann::json());
      // Full precision in the CSV; an empty field for "not measured".
      const bool missing = v.is_null() || (v.is_number_float() && !std::isfinite(v.get<double>()));
      const std::string text = missing ? "" : v.is_string() ? v.get<std::string>() : v.dump();
      csv += (i ? "," : "") + csv_field(text);
    }
    csv += "\n";
  }
  return csv;
}

std::string table_markdown(const ResultTable& t) {
  std::string md = "## " + t.title + "\n\n";
  std::vector<std::string> groups;
  if (!t.group_column.empty())
    for (const nlohmann::json& row : t.rows) {
      const std::string g = row.value(t.group_column, std::string());
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    }
  if (groups.empty()) md += markdown_rows(t, "");
  for (size_t i = 0; i < groups.size(); ++i)
    md += (i ? "\n" : "") + std::string("### ") + t.group_column + ": " + groups[i] + "\n\n" +
          markdown_rows(t, groups[i]);
  if (!t.notes.empty()) md += "\n";
  for (const std::string& note : t.notes) md += "- " + note + "\n";
  return md;
}

std::string table_json(const ResultTable& t) {
  return nlohmann::json({{"scenario", t.scenario},
                         {"title", t.title},
                         {"columns", t.columns},
                         {"rows", t.rows},
                         {"notes", t.notes},
                         {"details", t.details}})
             .dump(2) +
         "\n";
}

std::string table_svg(const ResultTable& t) {
  return line_chart_svg(t.title, t.plot, t.plot_x_label, t.plot_y_label);
}

std::vector<std::string> write_table_files(const ResultTable& t, const std::string& dir) {
  make_directories(dir);
  const std::string base = dir + "/" + t.scenario;
  const std::vector<std::pair<std::string, std::string>> files = {{base + ".csv", table_csv(t)},
                                                                  {base + ".md", table_markdown(t)},
                                                                  {base + ".svg", table_svg(t)},
                                                                  {base + ".json", table_json(t)}};
  std::vector<std::string> paths;
  for (const auto& [path, text] : files) {
    write_text_output(path, text);
    paths.push_back(path);
  }
  return paths;
}

}  // namespace octet
