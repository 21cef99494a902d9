// The data options shared by the commands that read images for a
// checkpoint (tools/options.h): the checkpoint's dataset folder, or the
// user's own images for calibration (--calib-data) and evaluation
// (--eval-data, --eval-labels), and how a folder's images become the model's
// input (--resize, --crop, --mean, --std, --preprocess).
#include <cstdio>

#include "common/error.h"
#include "tools/options.h"

namespace octet {

namespace {
struct Preset {
  const char* name;
  int resize, crop;
  std::vector<float> mean, std;
};

// torchvision's ImageNet evaluation transforms: Resize(256), CenterCrop(224), Normalize(...).
const Preset kPresets[] = {{"imagenet", 256, 224, {0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}}};

const Preset* preset(const std::string& name) {
  if (name.empty()) return nullptr;
  for (const Preset& p : kPresets)
    if (name == p.name) return &p;
  fail("unknown --preprocess '" + name + "' (known: imagenet)");
}

std::string values(const std::vector<float>& v) {
  std::string out;
  char number[32];
  for (float x : v) {
    std::snprintf(number, sizeof number, "%g", static_cast<double>(x));
    out += (out.empty() ? "" : " ") + std::string(number);
  }
  return "[" + out + "]";
}

bool is_identity(const std::vector<float>& mean, const std::vector<float>& std) {
  for (float m : mean)
    if (m != 0.0f) return false;
  for (float s : std)
    if (s != 1.0f) return false;
  return true;
}
}  // namespace

DataOptions DataArgs::data() const {
  const Preset* p = preset(preprocess);
  check(resize >= 0 && crop >= 0, "--resize and --crop must be positive (0: none)");
  check(mean.empty() == std.empty(), "--mean and --std go together (one value per channel each)");
  for (float s : std) check(s > 0, "--std values must be positive");
  const bool folder_options = resize > 0 || crop > 0 || !mean.empty() || p;
  DataOptions d(dir);
  for (auto [source, path] : {std::pair<ImageSource*, const std::string*>{&d.calib, &calib}, {&d.eval, &eval}}) {
    source->path = *path;
    source->resize = resize > 0 ? resize : p ? p->resize : 0;
    source->crop = crop > 0 ? crop : p ? p->crop : 0;
  }
  d.eval.labels = eval_labels;
  d.calib.list = calib_list;
  d.eval.list = eval_list;
  check(calib_list.empty() || !calib.empty(),
        "--calib-list goes with --calib-data (the folder of the images it names)");
  check(eval_list.empty() || !eval.empty(), "--eval-list goes with --eval-data (the folder of the images it names)");
  check((image_suffix.empty() && mask_suffix.empty()) || (!eval_labels.empty() && !d.eval.is_npy()),
        "--image-suffix and --mask-suffix say how --eval-data's images name their masks: they go with a folder of "
        "images and --eval-labels, a folder of masks");
  d.eval.image_suffix = image_suffix;
  d.eval.mask_suffix = mask_suffix;
  check(eval_labels.empty() || !eval.empty(),
        "--eval-labels goes with --eval-data (a .npy of labels with a .npy of images, a folder of masks with a folder "
        "of images)");
  const bool folder = (!calib.empty() && !d.calib.is_npy()) || (!eval.empty() && !d.eval.is_npy());
  check(!folder_options || folder,
        "--resize, --crop, --mean, --std and --preprocess say how a folder's images become the model's input: give "
        "one with --calib-data or --eval-data (a .npy holds model inputs as they are)");
  // A .npy beside a folder takes no resizing.
  if (d.calib.is_npy()) d.calib.resize = d.calib.crop = 0;
  if (d.eval.is_npy()) d.eval.resize = d.eval.crop = 0;
  return d;
}

void DataArgs::normalise(std::vector<float>* model_mean, std::vector<float>* model_std, const std::string& whose) const {
  const Preset* p = preset(preprocess);
  const std::vector<float>& m = !mean.empty() ? mean : p ? p->mean : mean;
  const std::vector<float>& s = !std.empty() ? std : p ? p->std : std;
  if (m.empty()) return;
  check(m.size() == model_mean->size() && s.size() == model_mean->size(),
        "--mean and --std need " + std::to_string(model_mean->size()) + " values each (one per channel of " + whose +
            "'s input)");
  if (is_identity(*model_mean, *model_std)) {
    *model_mean = m;
    *model_std = s;
    return;
  }
  check(m == *model_mean && s == *model_std,
        whose + " normalises its input with mean " + values(*model_mean) + " and std " + values(*model_std) +
            ", and --mean/--std" + (p && mean.empty() ? " (--preprocess " + preprocess + ")" : "") + " give mean " +
            values(m) + " and std " + values(s) + ": leave them out, or import the model without --mean/--std");
}

void add_data_options(CLI::App* cmd, DataArgs& a, int uses) {
  if (uses & kDatasetFolder)
    cmd->add_option("--data", a.dir,
                    "Folder holding the checkpoint's dataset files (default: the dataset's Debian folder)");
  if (uses & kCalibrationData)
    cmd->add_option("--calib-data", a.calib,
                    "Your own calibration images instead of the dataset's training split: a folder in torchvision's "
                    "ImageFolder layout (FOLDER/CLASS/IMAGE.jpg|png), a folder of images alone (FOLDER/IMAGE.jpg|png) "
                    "or a .npy of float32 N x C x H x W model inputs, already normalised");
  if (uses & kCalibrationData)
    cmd->add_option("--calib-list", a.calib_list,
                    "A text file naming the images of --calib-data's folder to read, one per line, NAME or NAME.ext "
                    "(NAME: NAME.jpg, .jpeg or .png), as Pascal VOC's ImageSets/Segmentation/train.txt (default: "
                    "every image of the folder)");
  if (uses & kEvaluationData) {
    cmd->add_option("--eval-data", a.eval,
                    "Your own test images instead of the dataset's test split: an ImageFolder folder (labels: the "
                    "class folders, sorted), a folder of images alone, or a .npy of float32 N x C x H x W model "
                    "inputs, already normalised");
    cmd->add_option("--eval-labels", a.eval_labels,
                    "Labels of --eval-data's images. Of a .npy: a .npy of int64, int32 or uint8, one per image, or "
                    "for a model returning an image of logits a mask per image (N x H x W). Of a folder of images "
                    "alone: a folder of their masks, IMAGE.png for IMAGE.jpg, PNGs of class indices (palette, as "
                    "Pascal VOC's, or 8-bit grey) of the image's size, resized and cropped as it is (nearest "
                    "neighbour). In masks 255 marks a pixel without a label; they give pixel accuracy and mean IoU. "
                    "Without: no top-1, int8 is compared with float");
    cmd->add_option("--eval-list", a.eval_list,
                    "A text file naming the images of --eval-data's folder to read, one per line, NAME or NAME.ext "
                    "(NAME: NAME.jpg, .jpeg or .png), as Pascal VOC's ImageSets/Segmentation/val.txt with "
                    "--eval-data JPEGImages --eval-labels SegmentationClass (default: every image of the folder)");
    cmd->add_option("--image-suffix", a.image_suffix,
                    "With --eval-labels a folder of masks: the end of an image's name that its mask's replaces, and "
                    "only images so named are read, subfolders too (Cityscapes: _leftImg8bit.png; default: the "
                    "extension)");
    cmd->add_option("--mask-suffix", a.mask_suffix,
                    "With --eval-labels a folder of masks: what ends a mask's name in place of --image-suffix, in the "
                    "image's subfolder (Cityscapes: _gtFine_labelTrainIds.png; default: .png)");
  }
  cmd->add_option("--resize", a.resize,
                  "Folder images: resize the shorter side to N first (bilinear, as torchvision's Resize(N))");
  cmd->add_option("--crop", a.crop, "Folder images: then the centre N x N (torchvision's CenterCrop(N))");
  cmd->add_option("--mean", a.mean,
                  "Folder images: normalisation mean per channel, of pixels scaled to [0, 1] (default: the model's)")
      ->delimiter(',');
  cmd->add_option("--std", a.std, "Folder images: normalisation std per channel (default: the model's)")->delimiter(',');
  cmd->add_option("--preprocess", a.preprocess,
                  "Folder images: a preset of the above; imagenet: --resize 256 --crop 224 and ImageNet's mean and "
                  "std (options given as well take precedence)");
}

}  // namespace octet
