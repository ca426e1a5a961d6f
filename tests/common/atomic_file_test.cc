// AtomicFile: the one way strata writes a user-named file. What must hold:
// a symlink at the name is never written through, a failed write (full disk,
// file size limit) leaves the old file and no temporary one, names taken
// meanwhile are not clobbered, and stale temporary files of dead strata
// processes (only those) are cleared.
#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "util/temp_dir.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_util::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A pid that no process has: a child that exited and was reaped.
long dead_pid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

std::string temp_name(const std::string& target, long pid, uint32_t host) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld-%08x-%08x", pid, host, 0xdeadbeefu);
  return "." + target + ".strata-" + buf;
}

TEST(AtomicFile, CreatesTheFileWithTheUsualModeAndNothingElse) {
  TempDir dir;
  mode_t old = ::umask(022);
  Status written = write_file_atomically(dir.file("out.svg"), "<svg/>", Existing::kRefuse);
  ::umask(old);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(slurp(dir.file("out.svg")), "<svg/>");
  struct stat st;
  ASSERT_EQ(::stat(dir.file("out.svg").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u) << "0666 & ~umask, not mkstemp's 0600";
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out.svg"});
}

TEST(AtomicFile, ReplacingASymlinkNeverWritesThroughIt) {
  TempDir dir;
  spit(dir.file("victim"), "secret");
  ::chmod(dir.file("victim").c_str(), 0600);
  fs::create_symlink("victim", dir.file("out.svg"));
  Status written = write_file_atomically(dir.file("out.svg"), "<svg/>", Existing::kReplace);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(slurp(dir.file("victim")), "secret");
  EXPECT_FALSE(fs::is_symlink(dir.file("out.svg"))) << "the link itself was replaced";
  EXPECT_EQ(slurp(dir.file("out.svg")), "<svg/>");
}

TEST(AtomicFile, ASymlinkEvenDanglingIsTakenWithoutReplace) {
  TempDir dir;
  fs::create_symlink("victim", dir.file("dangling"));
  auto refused = AtomicFile::create(dir.file("dangling"), Existing::kRefuse);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, dir.file("dangling") + " exists; use --force to overwrite");
  EXPECT_FALSE(fs::exists(dir.file("victim"))) << "nothing created through the link";
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"dangling"});
}

TEST(AtomicFile, ALinkPlantedAfterTheCheckIsNotClobbered) {
  TempDir dir;
  auto file = AtomicFile::create(dir.file("out"), Existing::kRefuse);
  ASSERT_TRUE(file.ok()) << file.error().message;
  ASSERT_TRUE(file->write("new").ok());
  spit(dir.file("victim"), "secret");
  fs::create_symlink("victim", dir.file("out"));
  Status published = file->publish();
  ASSERT_FALSE(published.ok());
  EXPECT_EQ(published.error().message, dir.file("out") + " exists; use --force to overwrite");
  EXPECT_TRUE(fs::is_symlink(dir.file("out")));
  EXPECT_EQ(slurp(dir.file("victim")), "secret");
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"out", "victim"})) << "no temp left";
}

TEST(AtomicFile, ADirectoryIsRefusedEvenWithReplace) {
  TempDir dir;
  fs::create_directory(dir.file("d"));
  for (Existing existing : {Existing::kRefuse, Existing::kReplace}) {
    auto refused = AtomicFile::create(dir.file("d"), existing);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message, "cannot write '" + dir.file("d") + "': it is a directory");
  }
  auto slash = AtomicFile::create(dir.path().string() + "/", Existing::kReplace);
  ASSERT_FALSE(slash.ok());
  EXPECT_NE(slash.error().message.find("it is a directory"), std::string::npos);
}

TEST(AtomicFile, AMissingDirectoryFailsAtCreateWithTheReason) {
  TempDir dir;
  auto refused = AtomicFile::create(dir.file("no/such/out.svg"), Existing::kReplace);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "cannot create '" + dir.file("no/such/out.svg") + "': No such file or directory");
  EXPECT_EQ(refused.error().message.find('\n'), std::string::npos);
}

TEST(AtomicFile, AnEmptyNameIsRefused) {
  auto refused = AtomicFile::create("", Existing::kReplace);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "empty output file name");
}

TEST(AtomicFile, WithoutPublishTheTemporaryFileGoes) {
  TempDir dir;
  {
    auto file = AtomicFile::create(dir.file("out"), Existing::kRefuse);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(file->write("half").ok());
    EXPECT_EQ(entries(dir.path()).size(), 1u);
    EXPECT_NE(entries(dir.path())[0].find(".out.strata-"), std::string::npos);
  }
  EXPECT_TRUE(entries(dir.path()).empty());
}

// The file size limit makes write() fail with EFBIG, as a full disk makes it
// fail with ENOSPC: run in a child so the limit does not outlive the test.
TEST(AtomicFile, AFailedWriteKeepsTheOldFileAndLeavesNoTemporary) {
  TempDir dir;
  std::string path = dir.file("out.json");
  spit(path, "old contents");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    Status written = write_file_atomically(path, std::string(1 << 16, 'x'), Existing::kReplace);
    bool as_expected =
        !written.ok() && written.error().message == "cannot write '" + path + "': File too large";
    if (!written.ok()) std::fprintf(stderr, "%s\n", written.error().message.c_str());
    _exit(as_expected ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the write failed with 'File too large'";
  EXPECT_EQ(slurp(path), "old contents");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out.json"});
}

// A real full disk: a tiny tmpfs. Needs root (CI and this machine run as
// root); skipped where mounting is not allowed.
TEST(AtomicFile, AFullDiskKeepsTheOldFileAndLeavesNoTemporary) {
  TempDir dir;
  std::string mnt = dir.file("tiny");
  fs::create_directory(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  }
  std::string path = mnt + "/trace.svg";
  spit(path, "old contents");
  Status written = write_file_atomically(path, std::string(1 << 20, 'x'), Existing::kReplace);
  std::string old = slurp(path);
  std::vector<std::string> left = entries(mnt);
  ::umount(mnt.c_str());
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().message, "cannot write '" + path + "': No space left on device");
  EXPECT_EQ(old, "old contents");
  EXPECT_EQ(left, std::vector<std::string>{"trace.svg"});
}

TEST(AtomicFile, PublishNumberedTakesTheFirstFreeName) {
  TempDir dir;
  spit(dir.file("t1.sqlite"), "a");
  fs::create_symlink("nowhere", dir.file("t2.sqlite"));
  auto file = AtomicFile::create(dir.file("t1.sqlite"), Existing::kReplace);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(file->write("c").ok());
  Status published = file->publish_numbered(
      [&](int n) { return dir.file("t" + std::to_string(n) + ".sqlite"); }, 1);
  ASSERT_TRUE(published.ok()) << published.error().message;
  EXPECT_EQ(file->path(), dir.file("t3.sqlite"));
  EXPECT_EQ(slurp(dir.file("t1.sqlite")), "a");
  EXPECT_EQ(slurp(dir.file("t3.sqlite")), "c");
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"t1.sqlite", "t2.sqlite", "t3.sqlite"}));
}

TEST(AtomicFile, TemporaryNamesParseExactly) {
  long pid = 0;
  uint32_t host = 0;
  EXPECT_TRUE(parse_temp_name(".t.sqlite.strata-123-0000abcd-deadbeef", &pid, &host));
  EXPECT_EQ(pid, 123);
  EXPECT_EQ(host, 0xabcdu);
  EXPECT_TRUE(parse_temp_name(".a.strata-b.strata-7-00000000-00000000", &pid, &host));
  EXPECT_EQ(pid, 7);
  for (const char* name :
       {"t.sqlite.strata-123-0000abcd-deadbeef", ".t.sqlite.strata-123-0000abcd-deadbee",
        ".t.sqlite.strata-123-0000ABCD-deadbeef", ".t.sqlite.strata--0000abcd-deadbeef",
        ".t.sqlite.strata-12x-0000abcd-deadbeef", "..strata-123-0000abcd-deadbeef",
        ".t.sqlite.strata-0-0000abcd-deadbeef", ".t.sqlite.strata-123-0000abcd-deadbeef~",
        ".t.sqlite.strata-123-0000abcddeadbeef",
        ".t.sqlite.strata-12345678901-0000abcd-deadbeef"}) {
    EXPECT_FALSE(parse_temp_name(name, &pid, &host)) << name;
  }
}

TEST(AtomicFile, RemovesOnlyStaleTemporariesOfDeadProcessesOfThisHostAndUser) {
  TempDir dir;
  const uint32_t host = host_hash();
  const long dead = dead_pid();
  std::string stale = temp_name("t.sqlite", dead, host);
  std::string live = temp_name("t.sqlite", ::getpid(), host);
  std::string parent_live = temp_name("t.sqlite", ::getppid(), host);
  std::string other_host = temp_name("t.sqlite", dead, host ^ 1u);
  std::string not_ours = ".t.sqlite.strata-" + std::to_string(dead) + "-x";
  std::string link = temp_name("u.sqlite", dead, host);
  for (const auto& name : {stale, live, parent_live, other_host, not_ours}) {
    spit(dir.file(name), "x");
  }
  spit(dir.file("target"), "keep");
  fs::create_symlink("target", dir.file(link));
  std::vector<std::string> kept = {live, parent_live, other_host, not_ours, link, "target"};
  if (::geteuid() == 0) {
    // Another user's file: never removed, even by root.
    std::string foreign = temp_name("f.sqlite", dead, host);
    spit(dir.file(foreign), "x");
    ASSERT_EQ(::chown(dir.file(foreign).c_str(), 12345, 12345), 0);
    kept.push_back(foreign);
  }
  EXPECT_EQ(remove_stale_temps(dir.path().string()), 1);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(entries(dir.path()), kept);
  EXPECT_EQ(slurp(dir.file("target")), "keep");
}

TEST(AtomicFile, CreateClearsStaleTemporariesBesideItsTarget) {
  TempDir dir;
  std::string stale = temp_name("t.sqlite", dead_pid(), host_hash());
  spit(dir.file(stale), "x");
  auto file = AtomicFile::create(dir.file("out"), Existing::kRefuse);
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE(fs::exists(dir.file(stale)));
}

}  // namespace
}  // namespace strata
