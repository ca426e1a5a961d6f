// A mapped file's ELF facts that unwinding and symbolization need without a
// Dwfl: its type, loadable segments and build id, plus read-only access to
// its bytes (memory reads the stack copy cannot answer: .rodata, PLT).
//
// Threading: immutable after open(); concurrent reads are safe.
// Ownership: owns its read-only mmap of the file (or its copy of the vDSO).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace strata::symbolize {

class ElfFile {
 public:
  struct Segment {
    uint64_t vaddr = 0;
    uint64_t offset = 0;
    uint64_t filesz = 0;
    uint64_t memsz = 0;
    bool executable = false;
  };

  // Opens a file on disk, or for "[vdso]" a copy of this process's vDSO
  // (the same kernel image the profiled process had when it ran here).
  static Result<std::unique_ptr<ElfFile>> open(const std::string& path);
  ~ElfFile();
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& build_id() const { return build_id_; }  // lowercase hex, "" when none
  bool is_exec() const { return exec_; }                     // ET_EXEC: fixed addresses
  const std::vector<Segment>& segments() const { return segments_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool is_vdso() const { return vdso_; }

  // The load bias implied by a mapping of this file at `start` with file
  // offset `pgoff`; nullopt when no segment holds that offset.
  std::optional<uint64_t> bias_for(uint64_t start, uint64_t pgoff) const;

  // A fresh descriptor of the file for libdwfl, which takes ownership.
  int open_fd() const;

 private:
  ElfFile() = default;
  bool parse();

  std::string path_;
  std::string build_id_;
  bool exec_ = false;
  bool vdso_ = false;
  std::vector<Segment> segments_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mmap_base_ = nullptr;
  std::vector<uint8_t> copy_;  // the vDSO image
};

// Hex of a build id's bytes.
std::string hex_build_id(const void* bytes, size_t len);

}  // namespace strata::symbolize
