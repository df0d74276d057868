// RecordToJson.
#include "tirtune/database/record_json.h"

namespace tirtune {

nlohmann::ordered_json RecordToJson(const TuningRecord& r) {
  using ordered_json = nlohmann::ordered_json;
  return ordered_json{{"workload", r.workload},
                      {"target", r.target},
                      {"status", RecordStatusName(r.status)},
                      {"median_secs", r.median_secs ? ordered_json(*r.median_secs) : nullptr},
                      {"run_secs", r.run_secs},
                      {"error", r.error},
                      {"device", r.device},
                      {"program_version", r.program_version},
                      {"created_at", r.created_at},
                      {"trace", ordered_json::parse(r.trace.dump())}};
}

}  // namespace tirtune
