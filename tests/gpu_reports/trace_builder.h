// Builds small SQLite files with Nsight Systems' export tables for the GPU
// report tests: known rows in, so every report number can be worked out by
// hand. Names are interned into StringIds as nsys does; text goes through
// bound parameters, so names may hold any bytes.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "nsys_schema_fixture.h"
#include "store/gpu_tables.h"

namespace strata::testing {

// Serialized GlobalIds as nsys writes them: pid in bits 24..47.
inline int64_t global_pid(int64_t pid) {
  return pid << 24;
}
inline int64_t global_tid(int64_t pid, int64_t tid) {
  return (pid << 24) | tid;
}

// A fresh directory under the system temp dir, removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    auto base = std::filesystem::temp_directory_path();
    for (int i = 0;; ++i) {
      path_ = base / ("strata-gpu-reports-" + std::to_string(::getpid()) + "-" + std::to_string(i));
      if (std::filesystem::create_directory(path_)) break;
    }
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

enum Tables : unsigned {
  kWithStringIds = 1u << 0,
  kWithRuntime = 1u << 1,
  kWithKernels = 1u << 2,
  kWithMemcpy = 1u << 3,
  kWithMemset = 1u << 4,
  kWithNvtx = 1u << 5,
  kWithEverything = 0x3f,
};

class TraceBuilder {
 public:
  TraceBuilder(const std::string& path, unsigned tables) {
    std::filesystem::remove(path);
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) throw std::runtime_error("open " + path);
    exec(kMetaDataExportSql);
    exec("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3')");
    if (tables & kWithStringIds) exec(kStringIdsSql);
    if (tables & kWithRuntime) {
      exec(kRuntimeSql);
      exec(kEventClassSql);
    }
    if (tables & kWithKernels) exec(kKernelSql);
    if (tables & kWithMemcpy) {
      exec(kMemcpySql);
      exec(kMemcpyOperSql);
      exec(kMemcpyOperRows);
    }
    if (tables & kWithMemset) exec(kMemsetSql);
    if (tables & kWithNvtx) exec(kNvtxEventsSql);
    exec("BEGIN");
  }
  ~TraceBuilder() { sqlite3_close(db_); }
  TraceBuilder(const TraceBuilder&) = delete;
  TraceBuilder& operator=(const TraceBuilder&) = delete;

  void exec(std::string_view sql) {
    std::string text(sql);
    char* message = nullptr;
    if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      std::string why = message ? message : "?";
      sqlite3_free(message);
      throw std::runtime_error(why + " in " + text);
    }
  }
  void commit() { exec("COMMIT"); }

  // A new StringIds row for every call, so that equal names may have two ids.
  int64_t new_string(const std::string& value) {
    int64_t id = next_id_++;
    run("INSERT INTO StringIds (id, value) VALUES (?, ?)", {id}, {value});
    return id;
  }
  // The id of `value`, interned once.
  int64_t string(const std::string& value) {
    auto it = interned_.find(value);
    if (it != interned_.end()) return it->second;
    return interned_[value] = new_string(value);
  }

  void runtime(int64_t start, int64_t end, int64_t gtid, int64_t correlation,
               const std::string& name, int64_t event_class = 0) {
    run("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
        "correlationId, nameId, returnValue) VALUES (?, ?, ?, ?, ?, ?, 0)",
        {start, end, event_class, gtid, correlation, string(name)}, {});
  }

  // demangled/short/mangled are StringIds ids; mangled < 0 = NULL.
  void kernel_ids(int64_t start, int64_t end, int64_t gpid, int64_t correlation, int64_t demangled,
                  int64_t short_name, int64_t mangled = -1, int64_t device = 0) {
    run("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
        "correlationId, globalPid, demangledName, shortName, mangledName, registersPerThread, "
        "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
        "localMemoryPerThread, localMemoryTotal, gridId) "
        "VALUES (?, ?, ?, 1, 7, ?, ?, ?, ?, nullif(?, -1), 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, 1)",
        {start, end, device, correlation, gpid, demangled, short_name, mangled}, {});
  }
  void kernel(int64_t start, int64_t end, int64_t gpid, int64_t correlation,
              const std::string& name, int64_t device = 0) {
    int64_t id = string(name);
    kernel_ids(start, end, gpid, correlation, id, id, -1, device);
  }

  void memcpy(int64_t start, int64_t end, int64_t bytes, int64_t copy_kind) {
    run("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
        "bytes, copyKind) VALUES (?, ?, 0, 1, 7, ?, ?)",
        {start, end, bytes, copy_kind}, {});
  }
  void memset(int64_t start, int64_t end, int64_t bytes) {
    run("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, "
        "value, bytes) VALUES (?, ?, 0, 1, 7, 0, ?)",
        {start, end, bytes}, {});
  }

  // A range with a registered string (textId), or with explicit text when
  // `registered` is false; end nullopt = never closed.
  void nvtx(int64_t start, std::optional<int64_t> end, int32_t type, int64_t gtid,
            const std::string& text, bool registered = true, int64_t domain = 0) {
    sqlite3_stmt* s = prepare(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, text, domainId) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)");
    sqlite3_bind_int64(s, 1, start);
    if (end) sqlite3_bind_int64(s, 2, *end);
    sqlite3_bind_int64(s, 3, type);
    sqlite3_bind_int64(s, 4, gtid);
    if (registered) {
      sqlite3_bind_int64(s, 5, string(text));
    } else {
      sqlite3_bind_text(s, 6, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    }
    sqlite3_bind_int64(s, 7, domain);
    finish(s);
  }

 private:
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK) {
      throw std::runtime_error(std::string(sqlite3_errmsg(db_)) + " in " + sql);
    }
    return s;
  }
  void finish(sqlite3_stmt* s) {
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db_));
  }
  void run(const char* sql, std::initializer_list<int64_t> ints,
           std::initializer_list<std::string> texts) {
    sqlite3_stmt* s = prepare(sql);
    int i = 1;
    for (int64_t v : ints) sqlite3_bind_int64(s, i++, v);
    for (const auto& t : texts) {
      sqlite3_bind_text(s, i++, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
    }
    finish(s);
  }

  sqlite3* db_ = nullptr;
  int64_t next_id_ = 1;
  std::map<std::string, int64_t> interned_;
};

// Loads a file's GPU tables through a read-only connection.
inline Result<store::GpuTables> load_file(const std::string& path,
                                          const store::GpuLoadOptions& options = {}) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return make_error(path + ": cannot open");
  }
  auto out = store::load_gpu_tables(db, path, options);
  sqlite3_close(db);
  return out;
}

}  // namespace strata::testing
