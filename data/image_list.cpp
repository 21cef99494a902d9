#include "data/image_list.h"

#include <algorithm>
#include <cstdint>

#include "common/error.h"
#include "common/file_io.h"

namespace octet {

namespace {
constexpr size_t kLongestName = 4096;  // PATH_MAX: no file has a longer name

std::string trimmed(const std::string& line) {
  const size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}
}  // namespace

std::vector<ListedName> parse_image_list(const std::string& text, const std::string& list_file) {
  std::vector<ListedName> names;
  int64_t line = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    ++line;
    const std::string where = list_file + " line " + std::to_string(line) + ": ";
    const std::string name = trimmed(text.substr(start, end - start));
    start = end + 1;
    if (name.empty()) continue;
    check(name.find('\0') == std::string::npos, where + "a NUL byte (a list of image names is a text file)");
    check(name.size() <= kLongestName, where + "a name of " + std::to_string(name.size()) + " bytes, more than " +
                                           std::to_string(kLongestName) + " (one image name per line)");
    check(name[0] != '/', where + "'" + name + "' is an absolute path: names are relative to the image folder");
    names.push_back({name, line});
  }
  check(!names.empty(), list_file + ": names no image (one image name per line, as Pascal VOC's ImageSets)");
  return names;
}

std::vector<std::string> images_named_in(const std::string& list_file, const std::string& folder,
                                         const std::string& suffix) {
  check(file_exists(list_file), "no list file '" + list_file + "' (a text file of image names, one per line)");
  const std::vector<uint8_t> bytes = read_file_bytes(list_file);
  std::vector<std::string> files;
  for (const ListedName& listed : parse_image_list(std::string(bytes.begin(), bytes.end()), list_file)) {
    const std::string path = folder + "/" + listed.name;
    std::string found = !suffix.empty() && file_exists(path + suffix) ? path + suffix : "";
    for (const char* extension : {".jpg", ".jpeg", ".png", ".JPG", ".JPEG", ".PNG", ""})
      if (found.empty() && file_exists(path + extension)) found = path + extension;
    check(!found.empty(), list_file + " line " + std::to_string(listed.line) + ": no image '" + listed.name +
                              "' in " + folder + " (" + listed.name + ", or with .jpg, .jpeg or .png)");
    files.push_back(found);
  }
  return files;
}

}  // namespace octet
