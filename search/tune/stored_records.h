// The records the tuning loop stores and reads (tune.cc): a measurement's status and message as
// stored, which records train the cost model, and the other workloads' records replayed as the
// model's prior.
#pragma once

#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "tirtune/search/tune.h"

namespace tirtune::tune_detail {

/// Stored records replayed for the cost model to learn from before the first batch, features
/// still to compute.
struct ReplayedRecords {
  std::vector<Schedule> schedules;
  std::vector<double> seconds;  // the median, or infinity for a failure
  std::vector<std::string> groups;

  void Add(Schedule sch, const TuningRecord& r, const std::string& group);
};

/// The stored status of a measurement.
RecordStatus ToRecordStatus(MeasureStatus status);
/// What went wrong, as stored with a failed record (a wrong result's errors included).
std::string ErrorText(const MeasureResult& r);

/// Whether a result says something about speed: a build error, a lost worker or a lost device
/// does not.
bool TrainsTheModel(RecordStatus status);
/// The algorithm a library record's Offload names ("" for the library's default or a record
/// that does not offload).
std::string OffloadAlgorithm(const TuningRecord& r);
/// TrainsTheModel(r.status), and not a library record.
bool TrainsTheModel(const TuningRecord& r);

/// Adds to `set` records of the workloads of `db` not being tuned (`tuned`), on `target`: at most
/// options.pretrain_per_workload of each (fewer when options.pretrain_max_others would be passed),
/// evenly spaced over its records so that a long search's early and late candidates both count.
/// Returns how many workloads contributed.
size_t AddOtherWorkloads(Database& db, const std::unordered_set<WorkloadId>& tuned,
                         const std::string& target, const TuneOptions& options,
                         ReplayedRecords& set);

/// Up to `count` schedules of `func` made from the best stored records (on `target`) of the
/// workloads `others` with the same block names (TransferRecord), the most productive source
/// first (its FLOP/s on its own shape), each schedule once; `*sources` (when given): how many
/// workloads they came from. For a task with no records of its own (TuneOptions::transfer).
std::vector<Schedule> TransferredSchedules(const std::vector<WorkloadEntry>& others, Database& db,
                                           const PrimFunc& func, const std::string& target,
                                           const SpaceGenerator& space, size_t count,
                                           uint64_t seed, size_t* sources);

}  // namespace tirtune::tune_detail
