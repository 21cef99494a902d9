// A list of the images to read from a folder (--calib-list, --eval-list):
// a text file of one name per line, as Pascal VOC's
// ImageSets/Segmentation/val.txt holds them and torchvision's VOCSegmentation
// reads them ("2007_000033": JPEGImages/2007_000033.jpg, its mask
// SegmentationClass/2007_000033.png). A name is relative to the folder and
// may carry its extension and subfolders ("frankfurt/0001.png"); without an
// extension it is NAME.jpg, .jpeg or .png (or in capitals), the first found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

// A name of the list and its line (from 1), for messages.
struct ListedName {
  std::string name;
  int64_t line = 0;
};

// The names `text` (the contents of `list_file`) lists: each line less its
// surrounding blanks (and a Windows line's '\r'), blank lines skipped. Fails
// naming the file and line: a NUL byte (not a text file), an absolute name,
// a name over 4096 bytes; and a list of no names.
std::vector<ListedName> parse_image_list(const std::string& text, const std::string& list_file);

// The image files of `folder` that `list_file` names, in its order: NAME
// followed by `suffix` where given (Cityscapes' _leftImg8bit.png), else by
// an image extension, else NAME itself. Fails naming the file, the line and
// the folder where a name has no image.
std::vector<std::string> images_named_in(const std::string& list_file, const std::string& folder,
                                         const std::string& suffix = "");

}  // namespace octet
