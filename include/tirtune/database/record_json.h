// The JSON form of a tuning record, shared by the JSON-lines file and `tirtune db --json`.
#pragma once

#include <nlohmann/json.hpp>

#include "tirtune/database/database.h"

namespace tirtune {

/// {"workload", "target", "status", "median_secs" (null without samples), "run_secs", "error",
/// "device", "program_version", "created_at", "trace"}, in this order.
nlohmann::ordered_json RecordToJson(const TuningRecord& record);

}  // namespace tirtune
