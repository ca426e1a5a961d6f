// CREATE statements of the Nsight Systems export tables the GPU reports
// read, copied (comments dropped) from a real nsys 2025.3.2 export (export
// schema 3.20.3, shared/reference/nsys-sqlite-schema.sql) so that the tests
// need nothing beside the repository. NVTX_EVENTS is not in that export; its
// columns are those strata's schema uses (src/store/schema.cc, from an nsys
// 2024.6.2 export).
#pragma once

#include <string_view>

namespace strata::testing {

inline constexpr std::string_view kStringIdsSql = R"sql(CREATE TABLE StringIds (
    id INTEGER NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);)sql";

inline constexpr std::string_view kRuntimeSql = R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL,
    globalTid INTEGER,
    correlationId INTEGER,
    nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL,
    callchainId INTEGER
);)sql";

inline constexpr std::string_view kKernelSql = R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL,
    greenContextId INTEGER,
    streamId INTEGER NOT NULL,
    correlationId INTEGER,
    globalPid INTEGER,
    demangledName INTEGER NOT NULL,
    shortName INTEGER NOT NULL,
    mangledName INTEGER,
    launchType INTEGER,
    cacheConfig INTEGER,
    registersPerThread INTEGER NOT NULL,
    gridX INTEGER NOT NULL,
    gridY INTEGER NOT NULL,
    gridZ INTEGER NOT NULL,
    blockX INTEGER NOT NULL,
    blockY INTEGER NOT NULL,
    blockZ INTEGER NOT NULL,
    staticSharedMemory INTEGER NOT NULL,
    dynamicSharedMemory INTEGER NOT NULL,
    localMemoryPerThread INTEGER NOT NULL,
    localMemoryTotal INTEGER NOT NULL,
    gridId INTEGER NOT NULL,
    sharedMemoryExecuted INTEGER,
    graphNodeId INTEGER,
    sharedMemoryLimitConfig INTEGER
);)sql";

inline constexpr std::string_view kMemcpySql = R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL,
    greenContextId INTEGER,
    streamId INTEGER NOT NULL,
    correlationId INTEGER,
    globalPid INTEGER,
    bytes INTEGER NOT NULL,
    copyKind INTEGER NOT NULL,
    deprecatedSrcId INTEGER,
    srcKind INTEGER,
    dstKind INTEGER,
    srcDeviceId INTEGER,
    srcContextId INTEGER,
    dstDeviceId INTEGER,
    dstContextId INTEGER,
    migrationCause INTEGER,
    graphNodeId INTEGER,
    virtualAddress INTEGER,
    copyCount INTEGER
);)sql";

inline constexpr std::string_view kMemsetSql = R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL,
    greenContextId INTEGER,
    streamId INTEGER NOT NULL,
    correlationId INTEGER,
    globalPid INTEGER,
    value INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    graphNodeId INTEGER,
    memKind INTEGER
);)sql";

inline constexpr std::string_view kEventClassSql = R"sql(CREATE TABLE ENUM_NSYS_EVENT_CLASS (
    id INTEGER NOT NULL PRIMARY KEY,
    name TEXT,
    label TEXT
);)sql";

inline constexpr std::string_view kMemcpyOperSql = R"sql(CREATE TABLE ENUM_CUDA_MEMCPY_OPER (
    id INTEGER NOT NULL PRIMARY KEY,
    name TEXT,
    label TEXT
);)sql";

inline constexpr std::string_view kMetaDataExportSql = R"sql(CREATE TABLE META_DATA_EXPORT (
    name TEXT NOT NULL,
    value TEXT
);)sql";

inline constexpr std::string_view kNvtxEventsSql = R"sql(CREATE TABLE NVTX_EVENTS (
    start INTEGER NOT NULL,
    end INTEGER,
    eventType INTEGER NOT NULL,
    rangeId INTEGER,
    category INTEGER,
    color INTEGER,
    text TEXT,
    globalTid INTEGER,
    endGlobalTid INTEGER,
    textId INTEGER,
    domainId INTEGER,
    uint64Value INTEGER,
    int64Value INTEGER,
    doubleValue REAL,
    uint32Value INTEGER,
    int32Value INTEGER,
    floatValue REAL,
    jsonTextId INTEGER,
    jsonText TEXT,
    binaryData TEXT
);)sql";

// ENUM_CUDA_MEMCPY_OPER as nsys fills it (labels as in an nsys 2024.6.2 export).
inline constexpr std::string_view kMemcpyOperRows = R"sql(INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES
    (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'),
    (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'),
    (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'),
    (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device'),
    (10, 'CUDA_MEMCPY_KIND_PTOP', 'Peer-to-Peer');)sql";

}  // namespace strata::testing
