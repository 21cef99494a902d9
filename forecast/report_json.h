// The JSON of the fits and forecasts `octet forecast` writes with --json.
#pragma once

#include <nlohmann/json.hpp>

#include "forecast/forecast.h"
#include "forecast/loss_model.h"

namespace octet {

// JSON has no infinity: a forecast that is never reached is null.
nlohmann::json finite_or_null(double x);
nlohmann::json params_json(const LossParams& b);
nlohmann::json fit_json(const LossFit& f);
nlohmann::json band_json(const Band& b);

}  // namespace octet
