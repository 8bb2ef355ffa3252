// The tracer's launch count (counter.h).
#include "counter.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>
#include <vector>

#include "loader.h"
#include "options.h"

namespace vouch_cupti {
namespace {

std::atomic<std::uint64_t> g_kernel_launches{0}, g_graph_launches{0};
CUpti_SubscriberHandle g_subscriber = nullptr;
// Per callback id of each API domain: 0 not a launch, 1 a kernel launch, 2 a graph launch.
std::vector<std::uint8_t> g_runtime_kind, g_driver_kind;
// The first launch callback enabled: the heartbeat checks it is still ours.
CUpti_CallbackDomain g_probe_domain = CUPTI_CB_DOMAIN_INVALID;
CUpti_CallbackId g_probe_cbid = 0;

thread_local int tl_depth = 0;          // launch calls open on this thread (runtime -> driver)
thread_local bool tl_captured = false;  // the open launch created a graph node (stream capture)

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && tl_depth > 0) tl_captured = true;
    return;
  }
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (tl_depth++ == 0) tl_captured = false;
    return;
  }
  if (tl_depth > 0) --tl_depth;
  if (tl_depth != 0) return;  // a driver launch inside a runtime launch: counted once, by it
  // cudaError_t and CUresult are both int-sized enums with success 0.
  const int rc = cb->functionReturnValue ? *static_cast<const int*>(cb->functionReturnValue) : 0;
  if (rc != 0 || tl_captured) return;
  const auto& kinds = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? g_runtime_kind : g_driver_kind;
  const std::uint8_t k = cbid < kinds.size() ? kinds[cbid] : 0;
  if (k == 1) g_kernel_launches.fetch_add(1, std::memory_order_relaxed);
  if (k == 2) g_graph_launches.fetch_add(1, std::memory_order_relaxed);
}

std::uint8_t LaunchKind(const char* n) {
  if (!n) return 0;
  if (std::strstr(n, "GraphLaunch")) return 2;
  if (std::strstr(n, "LaunchKernel") || std::strstr(n, "LaunchCooperativeKernel")) return 1;
  return 0;
}

int EnableDomain(CUpti_CallbackDomain domain, CUpti_CallbackId size,
                 std::vector<std::uint8_t>* kinds) {
  CuptiApi& api = Api();
  kinds->assign(size, 0);
  int enabled = 0;
  for (CUpti_CallbackId cb = 1; cb < size; ++cb) {
    const char* n = nullptr;
    if (api.cuptiGetCallbackName(domain, cb, &n) != CUPTI_SUCCESS) continue;
    std::uint8_t k = LaunchKind(n);
    if (!k || api.cuptiEnableCallback(1, g_subscriber, domain, cb) != CUPTI_SUCCESS) continue;
    (*kinds)[cb] = k;
    if (enabled++ == 0) {
      g_probe_domain = domain;
      g_probe_cbid = cb;
    }
  }
  return enabled;
}

std::string ResultName(CUptiResult r) {
  const char* s = nullptr;
  Api().cuptiGetResultString(r, &s);
  return s ? s : "CUPTI error " + std::to_string(static_cast<int>(r));
}

std::uint64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::mutex g_beat_mu;
std::condition_variable g_beat_cv;
bool g_beat_stop = false;
std::thread* g_beat = nullptr;

void Heartbeat(void (*line)(const std::string&), pid_t pid, long period_ms) {
  std::uint64_t last = 0;
  bool lost = false;
  std::unique_lock<std::mutex> lock(g_beat_mu);
  for (;;) {
    if (g_beat_cv.wait_for(lock, std::chrono::milliseconds(period_ms), [] { return g_beat_stop; }))
      return;
    if (getpid() != pid) return;
    const std::uint64_t k = g_kernel_launches.load(std::memory_order_relaxed);
    if (k != last) {
      last = k;
      line("{\"t\":\"lc\",\"ts\":" + std::to_string(RealtimeNs()) + ",\"k\":" + std::to_string(k) +
           "}");
    }
    if (!lost && g_probe_cbid != 0) {
      std::uint32_t enabled = 0;
      CUptiResult r =
          Api().cuptiGetCallbackState(&enabled, g_subscriber, g_probe_domain, g_probe_cbid);
      if (r != CUPTI_SUCCESS || !enabled) {
        lost = true;
        std::string what =
            r != CUPTI_SUCCESS
                ? "the tracer's launch callback (cuptiGetCallbackState: " + ResultName(r) + ")"
                : std::string("the tracer's launch callback (disabled by another)");
        std::string l = "{\"t\":\"lost\",\"ts\":" + std::to_string(RealtimeNs()) + ",\"what\":";
        AppendEscaped(&l, what.c_str());
        line(l + "}");
      }
    }
  }
}

}  // namespace

CounterStatus StartLaunchCounter() {
  CounterStatus st;
  CuptiApi& api = Api();
  CUptiResult r;
  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  if (api.cuptiSubscribe_v2) {
    CUpti_SubscriberParams p{};
    p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    p.subscriberName = "vouch";
    p.oldSubscriberName = other;
    p.oldSubscriberSize = sizeof other - 1;
    r = api.cuptiSubscribe_v2(&g_subscriber, reinterpret_cast<CUpti_CallbackFunc>(OnCallback),
                              nullptr, &p);
  } else {
    r = api.cuptiSubscribe(&g_subscriber, reinterpret_cast<CUpti_CallbackFunc>(OnCallback),
                           nullptr);
  }
  if (r != CUPTI_SUCCESS) {
    st.subscribe_error = ResultName(r);
    st.other_subscriber = other;
    return st;
  }
  st.callbacks =
      EnableDomain(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, &g_runtime_kind) +
      EnableDomain(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, &g_driver_kind);
  api.cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                          CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
  st.on = st.callbacks > 0;
  return st;
}

// Launch APIs only (not every runtime/driver call): the launch count and the link from a kernel
// to its launch, at a small fraction of full API tracing's cost.
namespace {

bool IsLaunchName(const char* n) {
  return n && (std::strstr(n, "LaunchKernel") || std::strstr(n, "LaunchCooperativeKernel") ||
               std::strstr(n, "GraphLaunch"));
}

}  // namespace

int EnableLaunchApiRecords() {
  int enabled = 0;
  for (CUpti_CallbackId cb = 1; cb < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cb) {
    const char* n = nullptr;
    if (Api().cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cb, &n) == CUPTI_SUCCESS &&
        IsLaunchName(n) && Api().cuptiActivityEnableRuntimeApi &&
        Api().cuptiActivityEnableRuntimeApi(cb, 1) == CUPTI_SUCCESS)
      ++enabled;
  }
  for (CUpti_CallbackId cb = 1; cb < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cb) {
    const char* n = nullptr;
    if (Api().cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cb, &n) == CUPTI_SUCCESS &&
        IsLaunchName(n) && Api().cuptiActivityEnableDriverApi &&
        Api().cuptiActivityEnableDriverApi(cb, 1) == CUPTI_SUCCESS)
      ++enabled;
  }
  return enabled;
}

std::uint64_t KernelLaunches() { return g_kernel_launches.load(); }
std::uint64_t GraphLaunches() { return g_graph_launches.load(); }

void StartHeartbeat(void (*line)(const std::string&), pid_t pid, long period_ms) {
  if (g_beat) return;
  g_beat = new std::thread(Heartbeat, line, pid, period_ms);
}

void StopHeartbeat() {
  if (!g_beat) return;
  {
    std::lock_guard<std::mutex> lock(g_beat_mu);
    g_beat_stop = true;
  }
  g_beat_cv.notify_all();
  if (g_beat->joinable()) g_beat->join();
}

}  // namespace vouch_cupti
