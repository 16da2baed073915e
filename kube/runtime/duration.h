// Duration: the unit of the delays a controller computes and is configured with: requeue and
// retry delays, backoffs, the work queue's poll, a TTL. Milliseconds, so an option written
// `Duration poll{200}` reads as 200 ms. Instants come from the injected Clock (base/clock.h).
#pragma once

#include <chrono>

namespace dljob::kube {

using Duration = std::chrono::milliseconds;

}  // namespace dljob::kube
