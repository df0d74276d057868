// The PostgreSQL backend beyond the contract suite: several writers with their own connections at
// once, the schema created once by several first openers, clear errors for a wrong URL, an
// unreachable server, failed authentication and a missing database, a server stopped mid-run,
// and rows that cannot be read. Each test gets a fresh database on this process's own server.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <latch>
#include <mutex>
#include <thread>

#include "../common/expect_contains.h"
#include "../common/postgres_server.h"
#include "test_records.h"

namespace tirtune {
namespace {

using testing::Gemm;
using testing::MakeRecord;
using testing::PostgresServer;
using testing::TraceNumbered;

constexpr const char* kCpu = "llvm -mcpu=znver5 -num-cores=2";

/// The message of the UserError `fn` throws; a test failure when it throws none.
std::string UserErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return "";
}


/// Runs `fn(i)` on `n` threads that start together; the messages of what they threw.
std::vector<std::string> RunTogether(int n, const std::function<void(int)>& fn) {
  std::latch start(n);
  std::mutex mu;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      try {
        fn(i);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        errors.push_back(e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return errors;
}

class Postgres : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server().ok()) << server().error();
    url_ = server().NewDatabase();
    name_ = url_.substr(url_.rfind('/') + 1);
  }
  static PostgresServer& server() { return PostgresServer::Shared(); }
  std::string Sql(const std::string& sql) { return server().Sql(sql, name_); }

  std::string url_;
  std::string name_;  // the database's name
  testing::Warnings warnings_;
};

TEST_F(Postgres, ConcurrentWritersLoseNothingAndStoreNoDuplicates) {
  constexpr int kWriters = 4, kBatches = 10, kOwn = 16, kShared = 16;
  std::vector<WorkloadId> ids(kWriters);
  std::vector<size_t> added(kWriters);
  std::vector<std::string> errors = RunTogether(kWriters, [&](int writer) {
    std::unique_ptr<Database> db = OpenDatabase(url_);
    ids[writer] = db->CommitWorkload(Gemm()).id;
    for (int b = 0; b < kBatches; ++b) {
      db->TopK(ids[writer], kCpu, 5);  // read, then write, as the tuner does
      std::vector<TuningRecord> batch;
      for (int i = 0; i < kOwn; ++i) {
        batch.push_back(MakeRecord(ids[writer], kCpu, (writer + 1) * 100000 + b * 100 + i, {1e-3}));
      }
      // Records every writer commits (duplicate deliveries), in an order of its own: inserts in
      // batch order would deadlock two writers here.
      for (int i = 0; i < kShared; ++i) {
        int j = writer % 2 ? kShared - 1 - i : i;
        batch.push_back(MakeRecord(ids[writer], kCpu, -(b * 100 + j) - 1, {2e-3}));
      }
      added[writer] += db->CommitRecords(batch);
    }
  });
  EXPECT_TRUE(errors.empty()) << errors[0];
  std::unique_ptr<Database> db = OpenDatabase(url_);
  const size_t expected = kWriters * kBatches * kOwn + kBatches * kShared;
  EXPECT_EQ(db->Size(), expected);
  size_t total_added = 0;
  for (size_t a : added) total_added += a;
  EXPECT_EQ(total_added, expected);  // each record counted new exactly once
  for (WorkloadId id : ids) EXPECT_EQ(id, ids[0]);
  EXPECT_EQ(db->Workloads().size(), 1u);
  EXPECT_EQ(Sql("SELECT count(DISTINCT (workload_id, target_id, trace_hash)) FROM tuning_record"),
            std::to_string(expected));
}

TEST_F(Postgres, ConcurrentFirstOpensCreateTheSchemaOnce) {
  std::vector<std::string> errors =
      RunTogether(6, [&](int) { OpenDatabase(url_)->CommitWorkload(Gemm()); });
  EXPECT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(Sql("SELECT count(*) FROM schema_version"), "1");
  EXPECT_EQ(Sql("SELECT count(*) FROM workload"), "1");
}

TEST_F(Postgres, ConcurrentCommitsOfOneNewWorkloadEndWithOneEntry) {
  OpenDatabase(url_);  // the schema exists; the race is on the workload alone
  std::vector<WorkloadId> small(4), large(4);
  std::vector<std::string> errors = RunTogether(4, [&](int i) {
    std::unique_ptr<Database> db = OpenDatabase(url_);
    if (i % 2) {
      small[i] = db->CommitWorkload(Gemm(16)).id;
      large[i] = db->CommitWorkload(Gemm(32)).id;
    } else {
      large[i] = db->CommitWorkload(Gemm(32)).id;
      small[i] = db->CommitWorkload(Gemm(16).WithName("renamed")).id;
    }
  });
  EXPECT_TRUE(errors.empty()) << errors[0];
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(small[i], small[0]);
    EXPECT_EQ(large[i], large[0]);
  }
  EXPECT_EQ(Sql("SELECT count(*) FROM workload"), "2");
}

TEST_F(Postgres, DescribeNamesTheUrl) {
  std::unique_ptr<Database> db = OpenDatabase(url_);
  EXPECT_EQ(db->Describe(), "PostgreSQL database '" + url_ + "'");
  // "postgres://" is libpq's other spelling.
  std::string short_url = "postgres://" + url_.substr(std::string("postgresql://").size());
  EXPECT_NE(OpenDatabase(short_url)->Describe().find(short_url), std::string::npos);
}

TEST_F(Postgres, AMalformedUrlSaysSo) {
  std::string message = UserErrorOf([&] { OpenDatabase(url_ + "?no_such_option=1"); });
  EXPECT_CONTAINS(message, "not a valid PostgreSQL URL");
  EXPECT_CONTAINS(message, "no_such_option");
  message = UserErrorOf([&] { OpenDatabase("postgresql://127.0.0.1:port/tune"); });
  EXPECT_CONTAINS(message, "'postgresql://127.0.0.1:port/tune'");
  EXPECT_CONTAINS(message, "port");
}

TEST_F(Postgres, AClosedPortIsAnUnreachableServer) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::string url =
      "postgresql://postgres@127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/x";
  // Bound but not listening: connections are refused.
  std::string message = UserErrorOf([&] { OpenDatabase(url); });
  EXPECT_CONTAINS(message, "'" + url + "'");
  EXPECT_CONTAINS(message, "the server is not reachable");
  // Listening but never answering: the connect timeout ends the wait.
  ASSERT_EQ(::listen(fd, 8), 0);
  message = UserErrorOf([&] { OpenDatabase(url + "?connect_timeout=2"); });
  EXPECT_CONTAINS(message, "the server is not reachable");
  EXPECT_CONTAINS(message, "timeout");
  ::close(fd);
}

TEST_F(Postgres, AMissingDatabaseIsNamed) {
  std::string message = UserErrorOf([&] { OpenDatabase(server().Url("no_such_db")); });
  EXPECT_CONTAINS(message, "the database does not exist");
  EXPECT_CONTAINS(message, "\"no_such_db\"");
}

TEST_F(Postgres, AWrongPasswordFailsAuthenticationAndNoPasswordIsEverPrinted) {
  server().Sql("DROP ROLE IF EXISTS " + std::string(PostgresServer::kPasswordUser));
  server().CreatePasswordUser("right-secret");
  std::string at = "@127.0.0.1:" + std::to_string(server().port()) + "/" + name_;
  std::string user = std::string("postgresql://") + PostgresServer::kPasswordUser;
  std::string message = UserErrorOf([&] { OpenDatabase(user + ":wrong-secret" + at); });
  EXPECT_CONTAINS(message, "authentication failed");
  EXPECT_CONTAINS(message, "'" + user + at + "'");
  EXPECT_EQ(message.find("wrong-secret"), std::string::npos) << message;
  message =
      UserErrorOf([&] { OpenDatabase(user + at + "?password=wrong-secret&sslmode=disable"); });
  EXPECT_CONTAINS(message, "authentication failed");
  EXPECT_CONTAINS(message, "'" + user + at + "?sslmode=disable'");
  EXPECT_EQ(message.find("wrong-secret"), std::string::npos) << message;

  std::unique_ptr<Database> db = OpenDatabase(user + ":right-secret" + at);
  EXPECT_EQ(db->Describe(), "PostgreSQL database '" + user + at + "'");
  // Messages about what happens later name the database the same way.
  message = UserErrorOf([&] { db->CommitRecords({MakeRecord(12345, kCpu, 1, {1.0})}); });
  EXPECT_CONTAINS(message, user + at);
  EXPECT_EQ(message.find("right-secret"), std::string::npos) << message;
}

TEST_F(Postgres, AnEmptyDatabaseIsNotCreatedWhenNotAllowed) {
  OpenOptions no_create;
  no_create.create_if_missing = false;
  EXPECT_CONTAINS(UserErrorOf([&] { OpenDatabase(url_, no_create); }), "holds no tirtune database");
  EXPECT_EQ(Sql("SELECT to_regclass('schema_version') IS NULL"), "t");
}

TEST_F(Postgres, ANewerSchemaIsRefused) {
  OpenDatabase(url_);
  Sql("UPDATE schema_version SET version = 99");
  std::string message = UserErrorOf([&] { OpenDatabase(url_); });
  EXPECT_CONTAINS(message, "schema version 99");
  EXPECT_CONTAINS(message, "newer tirtune");
}

TEST_F(Postgres, SomeoneElsesTableOfTheSameNameIsRefused) {
  Sql("CREATE TABLE workload (x integer)");
  std::string message = UserErrorOf([&] { OpenDatabase(url_); });
  EXPECT_CONTAINS(message, "not a tirtune database");
  EXPECT_CONTAINS(message, "'workload'");
  EXPECT_EQ(Sql("SELECT to_regclass('tuning_record') IS NULL"), "t");  // nothing was created
}

TEST_F(Postgres, TopKReadsAnIndexInItsOrder) {
  OpenDatabase(url_);
  EXPECT_CONTAINS(Sql("SELECT indexdef FROM pg_indexes WHERE indexname = 'tuning_record_best'"),
                  "(workload_id, target_id, status, median_secs, id)");
}

TEST_F(Postgres, UnreadableRowsAreSkippedWithAWarning) {
  std::unique_ptr<Database> db = OpenDatabase(url_, warnings_.Options());
  WorkloadId w = db->CommitWorkload(Gemm()).id;
  db->CommitRecords({MakeRecord(w, kCpu, 1, {1.0}), MakeRecord(w, kCpu, 2, {2.0}),
                     MakeRecord(w, kCpu, 3, {3.0}), MakeRecord(w, kCpu, 4, {4.0})});
  // Another program wrote garbage into the two best rows.
  Sql("UPDATE tuning_record SET trace = 'not json' WHERE median_secs = 1");
  Sql("UPDATE tuning_record SET run_secs = '[1e999]' WHERE median_secs = 2");
  std::vector<TuningRecord> top = db->TopK(w, kCpu, 2);
  ASSERT_EQ(top.size(), 2u);  // read past the skipped rows
  EXPECT_EQ(top[0].trace, TraceNumbered(3));
  EXPECT_EQ(top[1].trace, TraceNumbered(4));
  EXPECT_EQ(warnings_.messages.size(), 2u);
  EXPECT_TRUE(warnings_.Any("not valid JSON; skipped")) << warnings_.messages[0];
  EXPECT_EQ(db->RecordsOf(w).size(), 2u);
  EXPECT_EQ(warnings_.messages.size(), 2u);  // once per row
}

// Prune ranks records by reading them: garbage in the two best rows is never kept in place of
// the good ones.
TEST_F(Postgres, PruneNeverKeepsAnUnreadableRowInPlaceOfAGoodOne) {
  std::unique_ptr<Database> db = OpenDatabase(url_, warnings_.Options());
  WorkloadId w = db->CommitWorkload(Gemm()).id;
  db->CommitRecords({MakeRecord(w, kCpu, 1, {1.0}), MakeRecord(w, kCpu, 2, {2.0}),
                     MakeRecord(w, kCpu, 3, {3.0}), MakeRecord(w, kCpu, 4, {4.0})});
  Sql("UPDATE tuning_record SET trace = 'not json' WHERE median_secs <= 2");
  EXPECT_EQ(db->Prune(/*keep=*/1), 3u);
  EXPECT_TRUE(warnings_.Any("not valid JSON; skipped"));
  std::vector<TuningRecord> left = db->RecordsOf(w);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].trace, TraceNumbered(3));
}

TEST_F(Postgres, InvalidUtf8InAnErrorMessageIsStoredReplaced) {
  std::unique_ptr<Database> db = OpenDatabase(url_);
  WorkloadId w = db->CommitWorkload(Gemm()).id;
  TuningRecord r = MakeRecord(w, kCpu, 1, {}, RecordStatus::kBuildError);
  r.error = std::string("cc1: bad byte \xff here");
  EXPECT_EQ(db->CommitRecords({r}), 1u);
  EXPECT_EQ(db->RecordsOf(w).at(0).error, "cc1: bad byte \xef\xbf\xbd here");
}

TEST_F(Postgres, BatchesLargerThanOneStatementAreAllOrNothing) {
  std::unique_ptr<Database> db = OpenDatabase(url_);
  WorkloadId w = db->CommitWorkload(Gemm()).id;
  std::vector<TuningRecord> batch;
  for (int i = 0; i < 2500; ++i) batch.push_back(MakeRecord(w, kCpu, i, {1e-3 * (i % 7 + 1)}));
  EXPECT_EQ(db->CommitRecords(batch), 2500u);
  EXPECT_EQ(db->RecordsOf(w).back().trace, TraceNumbered(2499));  // ids follow the batch
  batch.push_back(MakeRecord(w, kCpu, 9999, {1.0}));
  // The last statement of the transaction fails on the server: nothing of the batch stays.
  Sql("ALTER TABLE tuning_record ADD CONSTRAINT no_9999 CHECK (trace NOT LIKE '%9999%')");
  for (int i = 2500; i < 2600; ++i) batch.push_back(MakeRecord(w, kCpu, i, {1.0}));
  EXPECT_CONTAINS(UserErrorOf([&] { db->CommitRecords(batch); }), "no_9999");
  EXPECT_EQ(db->Size(), 2500u);
}

TEST(PostgresServerStopped, MidRunIsAUserErrorAndLosesNothing) {
  PostgresServer own;  // this test stops it: not the shared one
  ASSERT_TRUE(own.ok()) << own.error();
  std::string url = own.NewDatabase();
  std::unique_ptr<Database> db = OpenDatabase(url);
  WorkloadId w = db->CommitWorkload(Gemm()).id;
  db->CommitRecords({MakeRecord(w, kCpu, 1, {1.0}), MakeRecord(w, kCpu, 2, {2.0})});
  ASSERT_TRUE(own.Stop());

  std::vector<TuningRecord> next = {MakeRecord(w, kCpu, 3, {0.5}), MakeRecord(w, kCpu, 4, {3.0})};
  std::string message = UserErrorOf([&] { db->CommitRecords(next); });
  EXPECT_CONTAINS(message, "'" + url + "'");
  EXPECT_CONTAINS(message, "connection to the server was lost");
  message = UserErrorOf([&] { db->TopK(w, kCpu, 1); });
  EXPECT_CONTAINS(message, "reconnecting failed");
  EXPECT_CONTAINS(message, "the server is not reachable");

  // Back up: the same object reconnects, what was committed is there, the failed batch is not.
  ASSERT_TRUE(own.Restart());
  EXPECT_EQ(db->Size(), 2u);
  EXPECT_EQ(db->CommitRecords(next), 2u);
  EXPECT_EQ(db->TopK(w, kCpu, 1).at(0).trace, TraceNumbered(3));
}

}  // namespace
}  // namespace tirtune
