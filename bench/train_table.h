// The result of one `octet bench train` scenario and its four files: a CSV,
// a markdown table, an SVG plot and a JSON summary.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/svg_plot.h"

namespace octet {

struct ResultTable {
  std::string scenario, title;
  std::vector<std::string> columns;
  // One JSON object per row, keyed by column: numbers, strings, or null for
  // "not measured" (a skipped run). Rows with another value in `group_column`
  // get a markdown table of their own.
  std::vector<nlohmann::json> rows;
  std::string group_column;
  std::vector<std::string> notes;  // conclusions, printed under the table
  std::vector<SvgSeries> plot;
  std::string plot_x_label, plot_y_label;
  nlohmann::json details;  // scenario settings and the runs' full training records
};

std::string table_csv(const ResultTable& table);
std::string table_markdown(const ResultTable& table);
std::string table_json(const ResultTable& table);
std::string table_svg(const ResultTable& table);

// Writes DIR/<scenario>.csv, .md, .svg and .json, each atomically; returns their paths.
std::vector<std::string> write_table_files(const ResultTable& table, const std::string& dir);

}  // namespace octet
