// Copying every workload and record from one database into another: export to JSON-lines,
// import from it, and moving records between backends.
#pragma once

#include <cstddef>

#include "tirtune/database/database.h"

namespace tirtune {

struct CopyStats {
  /// Workloads read from the source (each committed to the destination).
  size_t workloads = 0;
  /// Readable records read from the source.
  size_t records_read = 0;
  /// Records that were new in the destination (the rest were already there).
  size_t records_new = 0;
};

/// Commits every workload of `from` into `to` (mapping workload ids through structural
/// equality) and then every record, `batch_size` records per CommitRecords. Unreadable rows of
/// `from` are skipped with its warnings; copying again adds nothing.
CopyStats CopyDatabase(Database& from, Database& to, size_t batch_size = 1000);

}  // namespace tirtune
