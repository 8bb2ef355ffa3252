// The libcupti the tracer runs on, loaded at InitializeInjection (select.h chooses it). The
// tracer links no libcupti: every CUPTI call goes through this table, so one build runs on the
// CUPTI 12 of a PyTorch cu12x environment and on CUPTI 13. The activity records it reads
// (kernel, memcpy, memset, marker, device, API) keep every field the tracer reads at the same
// offset from CUPTI 11.x to 13.0 (tracer.cc asserts them against the 13.0 headers).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>

namespace vouch_cupti {

#define VOUCH_CUPTI_REQUIRED(X)        \
  X(cuptiGetVersion)                   \
  X(cuptiGetResultString)              \
  X(cuptiGetTimestamp)                 \
  X(cuptiActivityRegisterCallbacks)    \
  X(cuptiActivityEnable)               \
  X(cuptiActivityGetNextRecord)        \
  X(cuptiActivityGetNumDroppedRecords) \
  X(cuptiActivityFlushAll)             \
  X(cuptiGetCallbackName)              \
  X(cuptiSubscribe)                    \
  X(cuptiEnableCallback)               \
  X(cuptiGetCallbackState)
// Newer than some CUPTI 12.x: used where present, said in the header where not.
#define VOUCH_CUPTI_OPTIONAL(X)             \
  X(cuptiActivityRegisterTimestampCallback) \
  X(cuptiActivityEnableRuntimeApi)          \
  X(cuptiActivityEnableDriverApi)           \
  X(cuptiSubscribe_v2)

struct CuptiApi {
#define VOUCH_CUPTI_FIELD(fn) decltype(&::fn) fn = nullptr;
  VOUCH_CUPTI_REQUIRED(VOUCH_CUPTI_FIELD)
  VOUCH_CUPTI_OPTIONAL(VOUCH_CUPTI_FIELD)
#undef VOUCH_CUPTI_FIELD
  void* handle = nullptr;
  std::string path;           // the file loaded
  std::string choice;         // why it (select.h's reason)
  std::uint32_t version = 0;  // its cuptiGetVersion
  int major = 0;
};

// The table of the CUPTI in use (filled by LoadCupti).
CuptiApi& Api();

// Gathers the facts (the driver's CUDA version, the loaded libcudart and libcupti, the
// toolkits', the bundled one beside this library; VOUCH_CUPTI_PATH forces one), chooses, loads
// and resolves. False with *ERROR (one sentence, for the header and stderr) when none fits or
// the chosen one lacks a required function.
bool LoadCupti(std::string* error);

}  // namespace vouch_cupti
