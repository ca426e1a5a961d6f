#include "symbolize/elf_file.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace strata::symbolize {
namespace {

constexpr uint64_t kPageMask = ~uint64_t{0xfff};

// The size of this process's vDSO mapping, from /proc/self/maps.
size_t own_vdso_size(uint64_t base) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("[vdso]") == std::string::npos) continue;
    unsigned long long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &start, &end) == 2 && start == base) {
      return static_cast<size_t>(end - start);
    }
  }
  return 0;
}

}  // namespace

std::string hex_build_id(const void* bytes, size_t len) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  const auto* p = static_cast<const uint8_t*>(bytes);
  for (size_t i = 0; i < len; ++i) {
    out.push_back(kHex[p[i] >> 4]);
    out.push_back(kHex[p[i] & 15]);
  }
  return out;
}

Result<std::unique_ptr<ElfFile>> ElfFile::open(const std::string& path) {
  std::unique_ptr<ElfFile> file(new ElfFile);
  file->path_ = path;
  if (path == "[vdso]") {
    uint64_t base = getauxval(AT_SYSINFO_EHDR);
    size_t size = base ? own_vdso_size(base) : 0;
    if (size == 0) return make_error("no vDSO in this process to stand in for [vdso]");
    const auto* image = reinterpret_cast<const uint8_t*>(base);
    file->copy_.assign(image, image + size);
    file->data_ = file->copy_.data();
    file->size_ = size;
    file->vdso_ = true;
  } else {
    // O_NONBLOCK: the path comes from the target's mappings (or its spool),
    // and a FIFO put there must be refused below, not hang strata.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return make_error("cannot open " + path + ": " + std::strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 64) {
      ::close(fd);
      return make_error(path + " is not a regular ELF file");
    }
    void* base = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (base == MAP_FAILED) return make_error("cannot map " + path + ": " + std::strerror(errno));
    file->mmap_base_ = base;
    file->data_ = static_cast<const uint8_t*>(base);
    file->size_ = static_cast<size_t>(st.st_size);
  }
  if (!file->parse()) return make_error(path + " is not an ELF file libelf can read");
  return file;
}

ElfFile::~ElfFile() {
  if (mmap_base_ != nullptr) munmap(mmap_base_, size_);
}

bool ElfFile::parse() {
  elf_version(EV_CURRENT);
  // elf_memory wants a writable pointer but ELF_C_READ_MMAP-style access
  // does not write through it (elfutils 0.188).
  Elf* elf = elf_memory(reinterpret_cast<char*>(const_cast<uint8_t*>(data_)), size_);
  if (elf == nullptr) return false;
  bool ok = false;
  GElf_Ehdr ehdr;
  size_t phnum = 0;
  if (elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &ehdr) != nullptr &&
      elf_getphdrnum(elf, &phnum) == 0) {
    exec_ = ehdr.e_type == ET_EXEC;
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) {
        continue;
      }
      segments_.push_back(Segment{phdr.p_vaddr, phdr.p_offset, phdr.p_filesz, phdr.p_memsz,
                                  (phdr.p_flags & PF_X) != 0});
    }
    const void* id = nullptr;
    ssize_t len = dwelf_elf_gnu_build_id(elf, &id);
    if (len > 0) build_id_ = hex_build_id(id, static_cast<size_t>(len));
    ok = !segments_.empty();
  }
  elf_end(elf);
  return ok;
}

std::optional<uint64_t> ElfFile::bias_for(uint64_t start, uint64_t pgoff) const {
  for (const Segment& seg : segments_) {
    uint64_t off_lo = seg.offset & kPageMask;
    uint64_t off_hi = seg.offset + std::max(seg.filesz, uint64_t{1});
    if (pgoff < off_lo || pgoff >= off_hi) continue;
    uint64_t vaddr_at_start = (seg.vaddr & kPageMask) + (pgoff - off_lo);
    return start - vaddr_at_start;
  }
  return std::nullopt;
}

int ElfFile::open_fd() const {
  if (!vdso_) return ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  int fd = memfd_create("strata-vdso", MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < size_) {
    ssize_t n = write(fd, data_ + done, size_ - done);
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  return fd;
}

}  // namespace strata::symbolize
