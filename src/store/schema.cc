// Schema v1 DDL. The Nsight Systems tables are the CREATE statements of a
// real export (nsys 2025.3.2, export schema 3.20.3; shared/reference/
// nsys-sqlite-schema.sql), copied verbatim with their column comments so that
// `.schema` on a strata file reads like one on an nsys export and `nsys stats`
// finds the names and types its report scripts query.
// tests/store/schema_test.cc checks them column by column against that file.
#include "store/schema.h"

#include <array>
#include <string>
#include <vector>

namespace strata::store::schema {
namespace {

// Nsight Systems' ENUM_* tables share one shape (id, name, label), its
// META_DATA_* tables another (name, value): each shape is written once.
std::string enum_table(std::string_view table, std::string_view what) {
  return "CREATE TABLE " + std::string(table) + " (\n    -- " + std::string(what) + R"sql(

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);)sql";
}

std::string meta_table(std::string_view table, std::string_view what) {
  return "CREATE TABLE " + std::string(table) + " (\n    -- " + std::string(what) + R"sql(

    name                        TEXT      NOT NULL,                    -- Name of meta-data record
    value                       TEXT                                   -- Value of meta-data record
);)sql";
}

// Built once, on first use (the shared shapes are filled in at run time).
const std::array<std::string, 22>& nsys_table_texts() {
  static const std::array<std::string, 22> tables = {
      R"sql(CREATE TABLE StringIds (
    -- Consolidation of repetitive string values.

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID reference value.
    value                       TEXT      NOT NULL                     -- String value.
);)sql",
      R"sql(CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs                  INTEGER,                               -- UTC Epoch timestamp at start of the capture (ns).
    utcTime                     TEXT,                                  -- Start of the capture in UTC.
    localTime                   TEXT                                   -- Start of the capture in local time of target.
);)sql",
      R"sql(CREATE TABLE ANALYSIS_DETAILS (
    -- Details about the analysis session.

    globalVid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    duration                    INTEGER   NOT NULL,                    -- The total time span of the entire trace (ns).
    startTime                   INTEGER   NOT NULL,                    -- Trace start timestamp in nanoseconds.
    stopTime                    INTEGER   NOT NULL                     -- Trace stop timestamp in nanoseconds.
);)sql",
      R"sql(CREATE TABLE PROFILER_OVERHEAD (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    returnValue                 INTEGER   NOT NULL                     -- Return value of the function call.
);)sql",
      R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- ID used to identify events that this function call has triggered.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    returnValue                 INTEGER   NOT NULL,                    -- Return value of the function call.
    callchainId                 INTEGER                                -- REFERENCES CUDA_CALLCHAINS(id)
);)sql",
      R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes transferred (B).
    copyKind                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUDA_MEMCPY_OPER(id)
    deprecatedSrcId             INTEGER,                               -- Deprecated, use srcDeviceId instead.
    srcKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    dstKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    srcDeviceId                 INTEGER,                               -- Source device ID.
    srcContextId                INTEGER,                               -- Source context ID.
    dstDeviceId                 INTEGER,                               -- Destination device ID.
    dstContextId                INTEGER,                               -- Destination context ID.
    migrationCause              INTEGER,                               -- REFERENCES ENUM_CUDA_UNIF_MEM_MIGRATION(id)
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    virtualAddress              INTEGER,                               -- Virtual base address of the page/s being transferred.
    copyCount                   INTEGER                                -- The total number of memcopy operations traced in this record. In CUDA MemcpyBatchAsync APIs, multiple memcpy operations may be batched together for optimization purposes based on certain heuristics.
);)sql",
      R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- Correlation ID of the synchronization API to which this result is associated.
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    deprecatedSyncType          INTEGER,                               -- Deprecated, use syncType instead. For older report, REFERENCES ENUM_CUPTI_SYNC_TYPE(id)
    syncType                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUPTI_SYNC_TYPE(id)
    eventId                     INTEGER   NOT NULL,                    -- Event ID for which the synchronization API is called.
    eventSyncId                 INTEGER                                -- CUDA Event Sync ID to link the synchronization API to associated event record API.
);)sql",
      R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    demangledName               INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Kernel function name w/ templates
    shortName                   INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Base kernel function name
    mangledName                 INTEGER,                               -- REFERENCES StringIds(id) -- Raw C++ mangled kernel function name
    launchType                  INTEGER,                               -- REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)
    cacheConfig                 INTEGER,                               -- REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)
    registersPerThread          INTEGER   NOT NULL,                    -- Number of registers required for each thread executing the kernel.
    gridX                       INTEGER   NOT NULL,                    -- X-dimension grid size.
    gridY                       INTEGER   NOT NULL,                    -- Y-dimension grid size.
    gridZ                       INTEGER   NOT NULL,                    -- Z-dimension grid size.
    blockX                      INTEGER   NOT NULL,                    -- X-dimension block size.
    blockY                      INTEGER   NOT NULL,                    -- Y-dimension block size.
    blockZ                      INTEGER   NOT NULL,                    -- Z-dimension block size.
    staticSharedMemory          INTEGER   NOT NULL,                    -- Static shared memory allocated for the kernel (B).
    dynamicSharedMemory         INTEGER   NOT NULL,                    -- Dynamic shared memory reserved for the kernel (B).
    localMemoryPerThread        INTEGER   NOT NULL,                    -- Amount of local memory reserved for each thread (B).
    localMemoryTotal            INTEGER   NOT NULL,                    -- Total amount of local memory reserved for the kernel (B).
    gridId                      INTEGER   NOT NULL,                    -- Unique grid ID of the kernel assigned at runtime.
    sharedMemoryExecuted        INTEGER,                               -- Shared memory size set by the driver.
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    sharedMemoryLimitConfig     INTEGER                                -- REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)
);)sql",
      R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    value                       INTEGER   NOT NULL,                    -- Value assigned to memory.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes set (B).
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    memKind                     INTEGER                                -- REFERENCES ENUM_CUDA_MEM_KIND(id)
);)sql",
      R"sql(CREATE TABLE PROCESSES (
    -- Names and identifiers of processes captured in the report.

    globalPid                   INTEGER,                               -- Serialized GlobalId.
    pid                         INTEGER,                               -- The process ID.
    name                        TEXT                                   -- The process name.
);)sql",
      R"sql(CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Thread name
    priority                    INTEGER,                               -- Priority of the thread.
    globalTid                   INTEGER                                -- Serialized GlobalId.
);)sql",
      R"sql(CREATE TABLE TARGET_INFO_GPU (
    vmId                        INTEGER   NOT NULL,                    -- Serialized GlobalId.
    id                          INTEGER   NOT NULL,                    -- Device ID.
    name                        TEXT,                                  -- Device name.
    busLocation                 TEXT,                                  -- PCI bus location.
    isDiscrete                  INTEGER,                               -- True if discrete, false if integrated.
    l2CacheSize                 INTEGER,                               -- Size of L2 cache (B).
    totalMemory                 INTEGER,                               -- Total amount of memory on the device (B).
    memoryBandwidth             INTEGER,                               -- Amount of memory transferred (B).
    clockRate                   INTEGER,                               -- Clock frequency (Hz).
    smCount                     INTEGER,                               -- Number of multiprocessors on the device.
    pwGpuId                     INTEGER,                               -- PerfWorks GPU ID.
    uuid                        TEXT,                                  -- Device UUID.
    luid                        INTEGER,                               -- Device LUID.
    chipName                    TEXT,                                  -- Chip name.
    cuDevice                    INTEGER,                               -- CUDA device ID.
    ctxswDevPath                TEXT,                                  -- GPU context switch device node path.
    ctrlDevPath                 TEXT,                                  -- GPU control device node path.
    revision                    INTEGER,                               -- Revision number.
    nodeMask                    INTEGER,                               -- Device node mask.
    constantMemory              INTEGER,                               -- Memory available on device for __constant__ variables (B).
    maxIPC                      INTEGER,                               -- Maximum instructions per count.
    maxRegistersPerBlock        INTEGER,                               -- Maximum number of 32-bit registers available per block.
    maxShmemPerBlock            INTEGER,                               -- Maximum optin shared memory per block.
    maxShmemPerBlockOptin       INTEGER,                               -- Maximum optin shared memory per block.
    maxShmemPerSm               INTEGER,                               -- Maximum shared memory available per multiprocessor (B).
    maxRegistersPerSm           INTEGER,                               -- Maximum number of 32-bit registers available per multiprocessor.
    threadsPerWarp              INTEGER,                               -- Warp size in threads.
    asyncEngines                INTEGER,                               -- Number of asynchronous engines.
    maxWarpsPerSm               INTEGER,                               -- Maximum number of warps per multiprocessor.
    maxBlocksPerSm              INTEGER,                               -- Maximum number of blocks per multiprocessor.
    maxThreadsPerBlock          INTEGER,                               -- Maximum number of threads per block.
    maxBlockDimX                INTEGER,                               -- Maximum X-dimension of a block.
    maxBlockDimY                INTEGER,                               -- Maximum Y-dimension of a block.
    maxBlockDimZ                INTEGER,                               -- Maximum Z-dimension of a block.
    maxGridDimX                 INTEGER,                               -- Maximum X-dimension of a grid.
    maxGridDimY                 INTEGER,                               -- Maximum Y-dimension of a grid.
    maxGridDimZ                 INTEGER,                               -- Maximum Z-dimension of a grid.
    computeMajor                INTEGER,                               -- Major compute capability version number.
    computeMinor                INTEGER,                               -- Minor compute capability version number.
    smMajor                     INTEGER,                               -- Major multiprocessor version number.
    smMinor                     INTEGER                                -- Minor multiprocessor version number.
);)sql",
      R"sql(CREATE TABLE TARGET_INFO_CUDA_DEVICE (
    gpuId                       INTEGER,                               -- GPU ID.
    cudaId                      INTEGER   NOT NULL,                    -- CUDA device ID.
    pid                         INTEGER   NOT NULL                     -- Process ID.
);)sql",
      R"sql(CREATE TABLE TARGET_INFO_CUDA_CONTEXT_INFO (
    nullStreamId                INTEGER   NOT NULL,                    -- Stream ID.
    hwId                        INTEGER   NOT NULL,                    -- Hardware ID.
    vmId                        INTEGER   NOT NULL,                    -- VM ID.
    processId                   INTEGER   NOT NULL,                    -- Process ID.
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    parentContextId             INTEGER,                               -- For green context, this is the parent context id.
    isGreenContext              INTEGER                                -- Is this a Green Context?
);)sql",
      R"sql(CREATE TABLE TARGET_INFO_CUDA_STREAM (
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    hwId                        INTEGER   NOT NULL,                    -- Hardware ID.
    vmId                        INTEGER   NOT NULL,                    -- VM ID.
    processId                   INTEGER   NOT NULL,                    -- Process ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    priority                    INTEGER   NOT NULL,                    -- Priority of the stream.
    flag                        INTEGER   NOT NULL                     -- REFERENCES ENUM_CUPTI_STREAM_TYPE(id)
);)sql",
      enum_table("ENUM_NSYS_EVENT_CLASS", "Nsys event class labels"),
      enum_table("ENUM_CUDA_MEMCPY_OPER", "CUDA memcpy operation labels"),
      enum_table("ENUM_CUDA_MEM_KIND", "CUDA memory kind labels"),
      enum_table("ENUM_CUPTI_SYNC_TYPE", "CUPTI synchronization type labels"),
      meta_table("META_DATA_CAPTURE", "information about nsys capture parameters"),
      meta_table("META_DATA_EXPORT", "information about nsys export process"),
      // NVTX_EVENTS is not in the reference export (the capture had no NVTX
      // data, and nsys creates tables lazily). Its columns are those of an nsys
      // 2024.6.2 export (export schema 3.16.1); unverified against 2025.3.
      R"sql(CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER,                               -- Event end timestamp (ns).
    eventType                   INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_TYPE(id)
    rangeId                     INTEGER,                               -- Correlation ID returned from a nvtxRangeStart call.
    category                    INTEGER,                               -- User-controlled ID that can be used to group events.
    color                       INTEGER,                               -- Encoded ARGB color value.
    text                        TEXT,                                  -- Explicit name/text (non-registered string)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    endGlobalTid                INTEGER,                               -- Serialized GlobalId.
    textId                      INTEGER,                               -- REFERENCES StringIds(id) -- Registered NVTX domain/string
    domainId                    INTEGER,                               -- User-controlled ID that can be used to group events.
    uint64Value                 INTEGER,                               -- One of possible payload value union members.
    int64Value                  INTEGER,                               -- One of possible payload value union members.
    doubleValue                 REAL,                                  -- One of possible payload value union members.
    uint32Value                 INTEGER,                               -- One of possible payload value union members.
    int32Value                  INTEGER,                               -- One of possible payload value union members.
    floatValue                  REAL,                                  -- One of possible payload value union members.
    jsonTextId                  INTEGER,                               -- One of possible payload value union members.
    jsonText                    TEXT,                                  -- One of possible payload value union members.
    binaryData                  TEXT                                   -- Binary payload. See docs for format.
);)sql",
  };
  return tables;
}

// strata's own tables. Times are ns; "global_tid"/"global_pid" use nsys's
// serialized GlobalId encoding (pid in bits 24..47) so they join with
// ThreadNames/PROCESSES; *_id columns naming text are StringIds ids.
constexpr std::array<std::string_view, 19> kStrataTables = {
    // One row: what was run, by which strata, with which outcome.
    R"sql(CREATE TABLE strata_run (
    id                INTEGER   NOT NULL   PRIMARY KEY   CHECK (id = 1),
    schema_version    INTEGER   NOT NULL,   -- strata schema version of this file
    verb              TEXT      NOT NULL,   -- bench, cpu, trace, ...
    command           TEXT      NOT NULL,   -- argv as a JSON array of strings
    working_directory TEXT      NOT NULL,
    start_ns          INTEGER   NOT NULL,   -- CLOCK_REALTIME, ns since the epoch
    end_ns            INTEGER   NOT NULL,
    exit_status       INTEGER,              -- set when the target exited
    signal            INTEGER,              -- set when the target was killed
    host              TEXT      NOT NULL,
    tool_version      TEXT      NOT NULL
);)sql",
    // One row per execution of a command under `strata bench`.
    R"sql(CREATE TABLE strata_bench_runs (
    id                INTEGER   NOT NULL   PRIMARY KEY,
    label             TEXT      NOT NULL,   -- A or B
    command           TEXT      NOT NULL,   -- argv as a JSON array of strings
    iteration         INTEGER   NOT NULL,   -- 0-based, warm-ups and measured runs counted apart
    warmup            INTEGER   NOT NULL,   -- 1 for a warm-up run
    wall_ns           INTEGER   NOT NULL,
    user_ns           INTEGER   NOT NULL,
    sys_ns            INTEGER   NOT NULL,
    max_rss_kb        INTEGER   NOT NULL,
    exit_status       INTEGER,
    signal            INTEGER,
    minor_faults      INTEGER,              -- ru_minflt; added within schema v2, NULL before
    major_faults      INTEGER               -- ru_majflt; likewise
);)sql",
    // KEY=VALUE metrics a bench run printed, in the order printed.
    R"sql(CREATE TABLE strata_bench_metrics (
    run_id            INTEGER   NOT NULL,   -- REFERENCES strata_bench_runs(id)
    name              TEXT      NOT NULL,
    value             REAL      NOT NULL
);)sql",
    // CPU samples; a sample's stack is the strata_cpu_stacks rows of stack_id.
    R"sql(CREATE TABLE strata_cpu_samples (
    id                INTEGER   NOT NULL   PRIMARY KEY,
    timestamp         INTEGER   NOT NULL,   -- CLOCK_MONOTONIC (ns), the clock CUPTI is pointed at
    global_tid        INTEGER   NOT NULL,
    cpu               INTEGER,
    stack_id          INTEGER,              -- REFERENCES strata_cpu_stacks(id); NULL when unwinding failed
    weight            INTEGER   NOT NULL   DEFAULT 1,   -- samples (or ns) this row stands for
    source            TEXT      NOT NULL,              -- perf_event or sigprof
    cut               INTEGER   NOT NULL   DEFAULT 0   -- 1: the stack copy ended the unwind, the stack lacks its root part
);)sql",
    // Deduplicated stacks, one row per frame, depth 0 the innermost (leaf).
    R"sql(CREATE TABLE strata_cpu_stacks (
    id                INTEGER   NOT NULL,
    depth             INTEGER   NOT NULL,
    frame_id          INTEGER   NOT NULL,   -- REFERENCES strata_cpu_frames(id)
    PRIMARY KEY (id, depth)
);)sql",
    // Distinct frames; symbol columns are filled by offline symbolization.
    R"sql(CREATE TABLE strata_cpu_frames (
    id                INTEGER   NOT NULL   PRIMARY KEY,
    mapping_id        INTEGER,              -- REFERENCES strata_cpu_mappings(id)
    address           INTEGER   NOT NULL,   -- instruction address in the process
    kind              TEXT      NOT NULL,   -- native, python or kernel
    function_id       INTEGER,              -- REFERENCES StringIds(id) -- demangled name
    file_id           INTEGER,              -- REFERENCES StringIds(id) -- source file
    line              INTEGER,
    inlined           INTEGER   NOT NULL   DEFAULT 0,  -- 1 for a frame inlined into the next one
    python_name_id    INTEGER,              -- REFERENCES StringIds(id) -- cProfile's name of a C function Python calls
    sample_line       INTEGER   NOT NULL   DEFAULT 0   -- the sampled instruction's (or call's) line; 0 unknown
);)sql",
    // Executable mappings of the sampled processes, for symbolization.
    R"sql(CREATE TABLE strata_cpu_mappings (
    id                INTEGER   NOT NULL   PRIMARY KEY,
    global_pid        INTEGER   NOT NULL,
    start             INTEGER   NOT NULL,   -- first address
    end               INTEGER   NOT NULL,   -- one past the last address
    file_offset       INTEGER   NOT NULL,
    path_id           INTEGER,              -- REFERENCES StringIds(id)
    build_id          TEXT                  -- hex GNU build id, when the file has one
);)sql",
    // Per-launch kernel metrics of `strata kernels` (ncu's raw metric names),
    // one row per metric; a launch without any metric has one row with metric
    // and value NULL. This replaced, within schema v1, a placeholder of the
    // same name that no strata version ever wrote rows into, so no file with
    // rows in the old columns exists.
    R"sql(CREATE TABLE strata_kernel_metrics (
    pid               INTEGER,              -- the profiled process
    device            INTEGER,              -- CUDA device ordinal
    correlation_id    INTEGER,              -- CUPTI's id of the launch API call; 0 unknown
    invocation        INTEGER,              -- 0-based launch ordinal of this kernel name in the process
    kernel_name       TEXT,                 -- mangled, as CUPTI gives it
    status            INTEGER,              -- 0 collected; else CUptiResult, or CUresult + 1000000
    start_ns          INTEGER,              -- CLOCK_MONOTONIC around the profiled launch
    end_ns            INTEGER,
    metric            TEXT,                 -- ncu raw metric name, e.g. gpu__time_duration.sum
    value             REAL                  -- in the metric's base unit (ns, cycle, cycle/s, %, byte)
);)sql",
    // Every kernel name the profiled processes launched, with launch counts:
    // what `strata kernels` lists when no launch matched.
    R"sql(CREATE TABLE strata_kernels_seen (
    pid               INTEGER,
    kernel_name       TEXT,                 -- mangled
    launches          INTEGER
);)sql",
    // The CUDA graph of kernels launched from one: CUPTI gives graphId per
    // kernel record, the nsys kernel table has only graphNodeId.
    R"sql(CREATE TABLE strata_kernel_graphs (
    global_pid        INTEGER,
    correlation_id    INTEGER   NOT NULL,   -- CUPTI_ACTIVITY_KIND_KERNEL.correlationId
    graph_id          INTEGER   NOT NULL
);)sql",
    // Findings of `strata diagnose` and of report rules.
    R"sql(CREATE TABLE strata_diagnostics (
    id                INTEGER   NOT NULL   PRIMARY KEY,
    rule              TEXT      NOT NULL,   -- rule identifier
    layer             TEXT,                 -- host, launch, sync, gpu, kernel, ...
    severity          TEXT      NOT NULL,   -- info, warning or error
    message           TEXT      NOT NULL,
    evidence          TEXT,                 -- JSON object
    gain_bound_ns     INTEGER               -- upper bound on the time fixing it can save
);)sql",
    // Instrumented mode (-finstrument-functions): every enter and exit, in
    // order per thread, for exact call counts.
    R"sql(CREATE TABLE strata_cpu_calls (
    global_tid        INTEGER   NOT NULL,
    timestamp         INTEGER   NOT NULL,   -- CLOCK_MONOTONIC (ns)
    frame_id          INTEGER   NOT NULL,   -- REFERENCES strata_cpu_frames(id)
    kind              INTEGER   NOT NULL    -- 0 enter, 1 exit
);)sql",
    // PyTorch ops recorded by libstrata_torch's RecordFunction callback
    // (issue 18, docs/torch-ops-design.md): one row per op, on the clock of
    // every other table. Added within schema v1 (new tables only, as
    // strata_ranks).
    R"sql(CREATE TABLE strata_torch_ops (
    start             INTEGER   NOT NULL,   -- CLOCK_MONOTONIC (ns)
    end               INTEGER   NOT NULL,   -- CLOCK_MONOTONIC (ns)
    globalTid         INTEGER   NOT NULL,   -- the thread the op ran on (nsys's encoding)
    nameId            INTEGER   NOT NULL,   -- REFERENCES StringIds(id): "aten::mm", ...
    externalId        INTEGER   NOT NULL,   -- CUPTI external correlation id it pushed; 0: none
    seq               INTEGER   NOT NULL,   -- autograd sequence number; -1: none
    depth             INTEGER   NOT NULL,   -- ops open on the thread when it began
    scope             INTEGER   NOT NULL,   -- torch's at::RecordScope (0 function, 1 backward, 7 user scope, ...)
    flags             INTEGER   NOT NULL,   -- 1: unfinished (its end is when the process wrote it)
    shapesId          INTEGER,              -- REFERENCES StringIds(id): input shapes; NULL: not recorded
    stackId           INTEGER               -- REFERENCES StringIds(id): Python frames, innermost first; NULL: not recorded
);)sql",
    // What the op capture of each process said: recording (and how), or why not.
    R"sql(CREATE TABLE strata_torch_status (
    globalPid         INTEGER   NOT NULL,
    status            INTEGER   NOT NULL,   -- 1 recording, 2 cannot hook, 3 the program started torch.profiler, 4 note
    text              TEXT      NOT NULL
);)sql",
    // The PyTorch op around each CUDA API call (nsys exports have no such
    // table): found by the import on the shared clock
    // (import/torch_op_links.h), or CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION
    // records where the ops pushed their ids (older traces,
    // STRATA_AGENT_CLOCK=cupti). Kind 3 (CUSTOM0) either way.
    R"sql(CREATE TABLE strata_external_correlation (
    globalPid         INTEGER   NOT NULL,
    externalKind      INTEGER   NOT NULL,   -- CUpti_ExternalCorrelationKind (3: CUSTOM0, strata's op links)
    externalId        INTEGER   NOT NULL,   -- strata_torch_ops.externalId
    correlationId     INTEGER   NOT NULL    -- CUPTI_ACTIVITY_KIND_RUNTIME.correlationId
);)sql",
    // Survivable bad input, counted instead of skipped silently.
    R"sql(CREATE TABLE strata_counters (
    name              TEXT      NOT NULL   PRIMARY KEY,   -- e.g. spool.chunks_bad_crc
    value             INTEGER   NOT NULL
);)sql",
    // Which rank of a distributed job the run was (from the launcher's
    // variables) and a clock pair to line its CLOCK_MONOTONIC timestamps up
    // with other hosts'. Added within schema v1: it is a new table that v1
    // readers never query, and files written before it simply lack it (a
    // reader treats that as "no rank, no clock pair"), so no reader of
    // either age misreads a file. Changing an existing table's columns or
    // meaning would need a new version.
    R"sql(CREATE TABLE strata_ranks (
    global_pid        INTEGER,              -- the rank's process; NULL: the whole profiled command (strata ran inside the rank)
    rank              INTEGER,              -- global rank; NULL when no launcher variable gave one
    local_rank        INTEGER,              -- rank on this host
    world_size        INTEGER,
    local_world_size  INTEGER,
    launcher          TEXT      NOT NULL,   -- torchrun, openmpi, pmi, pmix, slurm; empty when none
    job_id            TEXT      NOT NULL,   -- TORCHELASTIC_RUN_ID or SLURM_JOB_ID[.SLURM_STEP_ID]; empty when unknown
    variables         TEXT      NOT NULL,   -- the launcher variables read, and CUDA_VISIBLE_DEVICES, as a JSON object
    boot_id           TEXT,                 -- /proc/sys/kernel/random/boot_id: equal ids share one CLOCK_MONOTONIC
    clock_monotonic_ns INTEGER  NOT NULL,   -- CLOCK_MONOTONIC at the moment ...
    clock_realtime_ns INTEGER   NOT NULL,   -- ... CLOCK_REALTIME read this value
    clock_error_ns    INTEGER   NOT NULL    -- bound on how far apart the two readings are
);)sql",
    // strata diagnose (issue 19): the layers it considered, in order, ran or
    // skipped and why, and the settings its verdict was judged by, so that
    // `strata report --report diagnosis` prints the same verdict again.
    // New tables within schema v1, as strata_ranks.
    R"sql(CREATE TABLE strata_diagnose_layers (
    position          INTEGER   NOT NULL,   -- 0, 1, ...: the order the layers were considered
    layer             TEXT      NOT NULL,   -- baseline, cpu, timeline, ops, kernels
    ran               INTEGER   NOT NULL,   -- 1 ran, 0 skipped
    reason            TEXT      NOT NULL,   -- why it ran or was skipped, one sentence
    elapsed_ns        INTEGER   NOT NULL    -- wall time the layer's runs took (0 when skipped)
);)sql",
    R"sql(CREATE TABLE strata_diagnose_settings (
    name              TEXT      NOT NULL,   -- budget_s, range, or a threshold name (min_share, ...)
    value             TEXT      NOT NULL
);)sql",
};

// Values from the Nsight Systems documentation's "SQLite Schema Event Values"
// and from an nsys 2024.6.2 export. ENUM_NSYS_EVENT_CLASS lists only the
// CUDA and OS runtime classes; labels are given only where seen in an export.
constexpr std::array<std::string_view, 4> kEnumRows = {
    R"sql(INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES
    (0, 'TRACE_PROCESS_EVENT_CUDA_RUNTIME', 'CUDA runtime'),
    (1, 'TRACE_PROCESS_EVENT_CUDA_DRIVER', 'CUDA driver'),
    (13, 'TRACE_PROCESS_EVENT_CUDA_EGL_DRIVER', NULL),
    (27, 'TRACE_PROCESS_EVENT_OS_RUNTIME', NULL),
    (28, 'TRACE_PROCESS_EVENT_CUDNN', 'cuDNN'),
    (29, 'TRACE_PROCESS_EVENT_CUBLAS', 'cuBLAS'),
    (31, 'TRACE_PROCESS_EVENT_OS_RUNTIME_START', NULL),
    (32, 'TRACE_PROCESS_EVENT_OS_RUNTIME_FINISH', NULL),
    (33, 'TRACE_PROCESS_EVENT_CUDNN_START', NULL),
    (34, 'TRACE_PROCESS_EVENT_CUDNN_FINISH', NULL),
    (35, 'TRACE_PROCESS_EVENT_CUBLAS_START', NULL),
    (36, 'TRACE_PROCESS_EVENT_CUBLAS_FINISH', NULL),
    (67, 'TRACE_PROCESS_EVENT_CUDABACKTRACE', NULL),
    (77, 'TRACE_PROCESS_EVENT_CUDA_GRAPH_NODE_CREATION', NULL);)sql",
    R"sql(INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES
    (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'),
    (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'),
    (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'),
    (3, 'CUDA_MEMCPY_KIND_HTOA', 'Host-to-Array'),
    (4, 'CUDA_MEMCPY_KIND_ATOH', 'Array-to-Host'),
    (5, 'CUDA_MEMCPY_KIND_ATOA', 'Array-to-Array'),
    (6, 'CUDA_MEMCPY_KIND_ATOD', 'Array-to-Device'),
    (7, 'CUDA_MEMCPY_KIND_DTOA', 'Device-to-Array'),
    (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device'),
    (9, 'CUDA_MEMCPY_KIND_HTOH', 'Host-to-Host'),
    (10, 'CUDA_MEMCPY_KIND_PTOP', 'Peer-to-Peer'),
    (11, 'CUDA_MEMCPY_KIND_UVM_HTOD', 'Unified Host-to-Device'),
    (12, 'CUDA_MEMCPY_KIND_UVM_DTOH', 'Unified Device-to-Host'),
    (13, 'CUDA_MEMCPY_KIND_UVM_DTOD', 'Unified Device-to-Device');)sql",
    R"sql(INSERT INTO ENUM_CUDA_MEM_KIND VALUES
    (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),
    (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'),
    (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device'),
    (3, 'CUDA_MEMOPR_MEMORY_KIND_ARRAY', 'Array'),
    (4, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED', 'Managed'),
    (5, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC', 'Device Static'),
    (6, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC', 'Managed Static'),
    (7, 'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN', 'Unknown');)sql",
    R"sql(INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES
    (0, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN', 'Unknown'),
    (1, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE', 'Event sync'),
    (2, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT', 'Stream wait sync'),
    (3, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE', 'Stream sync'),
    (4, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE', 'Context sync');)sql",
};

}  // namespace

std::span<const std::string_view> nsys_tables() {
  static const std::vector<std::string_view> views(nsys_table_texts().begin(),
                                                   nsys_table_texts().end());
  return views;
}
std::span<const std::string_view> strata_tables() {
  return kStrataTables;
}
std::span<const std::string_view> enum_rows() {
  return kEnumRows;
}

}  // namespace strata::store::schema
