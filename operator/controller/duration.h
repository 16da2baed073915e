// Duration: the controller's unit for the delays it computes and is configured with — requeue
// and retry delays, backoffs, the work queue's poll, the GPU ledger's TTL. Milliseconds, so an
// option written `Duration poll{200}` reads as 200 ms. Instants come from the injected Clock
// (base/clock.h).
#pragma once

#include <chrono>

namespace dljob::controller {

using Duration = std::chrono::milliseconds;

}  // namespace dljob::controller
