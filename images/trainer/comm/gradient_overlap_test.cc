#include "images/trainer/comm/gradient_overlap.h"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/comm/identical_ranks_collective.h"
#include "images/trainer/comm/loopback_collective.h"

namespace dljob::trainer {
namespace {

// Records the length of every allreduce, to compare the order of calls between two paths.
class RecordingCollective : public IdenticalRanksCollective {
 public:
  explicit RecordingCollective(int world) : IdenticalRanksCollective(world) {}
  Status AllreduceSum(float* data, size_t count) override {
    counts.push_back(count);
    return IdenticalRanksCollective::AllreduceSum(data, count);
  }
  using Collective::AllreduceSum;
  std::vector<size_t> counts;
};

// Three layers; `skip_last` leaves the last one out of the forward pass (no gradient).
struct Net : torch::nn::Module {
  Net() {
    a = register_module("a", torch::nn::Linear(8, 32));
    b = register_module("b", torch::nn::Linear(32, 16));
    c = register_module("c", torch::nn::Linear(16, 16));
  }
  torch::Tensor forward(const torch::Tensor& x, bool skip_last) {
    torch::Tensor h = b->forward(torch::relu(a->forward(x)));
    return skip_last ? h : c->forward(torch::relu(h));
  }
  torch::nn::Linear a{nullptr}, b{nullptr}, c{nullptr};
};

std::vector<torch::Tensor> ReverseParams(Net& net) {
  std::vector<torch::Tensor> params = net.parameters();
  return {params.rbegin(), params.rend()};
}

FusionOptions SmallBuckets() {
  FusionOptions o;
  o.threshold_bytes = 2048;  // 512 floats: a, b and c's tensors spread over several buckets
  o.segment_bytes = 1024;
  return o;
}

torch::Tensor Loss(Net& net, bool skip_last = false) {
  torch::manual_seed(5);
  return net.forward(torch::randn({4, 8}), skip_last).pow(2).mean();
}

// Gradients of one backward, averaged the plain way (after backward, AllreduceAverage).
std::vector<torch::Tensor> PlainGradients(Net& net, Collective& collective, bool skip_last) {
  net.zero_grad();
  Loss(net, skip_last).backward();
  FusedAllreducer fusion(collective, SmallBuckets());
  std::vector<FloatSpan> spans;
  std::vector<torch::Tensor> grads;
  for (torch::Tensor& p : ReverseParams(net)) {
    if (!p.grad().defined()) continue;
    grads.push_back(p.grad());
    spans.push_back({p.grad().data_ptr<float>(), static_cast<size_t>(p.numel())});
  }
  EXPECT_TRUE(fusion.AllreduceAverage(spans).ok());
  std::vector<torch::Tensor> copies;
  for (torch::Tensor& g : grads) copies.push_back(g.clone());
  return copies;
}

TEST(GradientOverlapTest, AveragesLikeThePlainPathInTheSameOrder) {
  torch::manual_seed(1);
  Net net;
  RecordingCollective plain_comm(2);
  std::vector<torch::Tensor> expected = PlainGradients(net, plain_comm, false);

  RecordingCollective comm(2);
  FusedAllreducer fusion(comm, SmallBuckets());
  auto overlap = GradientOverlap::Create(ReverseParams(net), fusion);
  ASSERT_TRUE(overlap.ok()) << overlap.status().message();
  EXPECT_GT((*overlap)->buckets(), 2u);
  for (int64_t step = 1; step <= 3; ++step) {  // the same gradients every step
    net.zero_grad();
    ASSERT_TRUE((*overlap)->BeginStep(step).ok());
    Loss(net).backward();
    Status s = (*overlap)->Finish();
    ASSERT_TRUE(s.ok()) << s.message();
    std::vector<torch::Tensor> params = ReverseParams(net);
    ASSERT_EQ(params.size(), expected.size());
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(torch::equal(params[i].grad(), expected[i])) << "parameter " << i;
    }
  }
  // Bucket by bucket, in plan order, exactly the calls the plain path makes.
  ASSERT_FALSE(plain_comm.counts.empty());
  std::vector<size_t> three_steps;
  for (int i = 0; i < 3; ++i) {
    three_steps.insert(three_steps.end(), plain_comm.counts.begin(), plain_comm.counts.end());
  }
  EXPECT_EQ(comm.counts, three_steps);
}

TEST(GradientOverlapTest, AParameterWithoutGradientIsReducedAsZeros) {
  torch::manual_seed(2);
  Net net;
  RecordingCollective comm(2);
  FusedAllreducer fusion(comm, SmallBuckets());
  auto overlap = GradientOverlap::Create(ReverseParams(net), fusion);
  ASSERT_TRUE(overlap.ok());
  ASSERT_TRUE((*overlap)->BeginStep(1).ok());
  Loss(net).backward();
  ASSERT_TRUE((*overlap)->Finish().ok());
  const std::vector<size_t> full = comm.counts;
  comm.counts.clear();
  net.zero_grad();
  ASSERT_TRUE((*overlap)->BeginStep(2).ok());
  Loss(net, /*skip_last=*/true).backward();
  ASSERT_TRUE((*overlap)->Finish().ok());
  EXPECT_EQ(comm.counts, full);  // the same calls: ranks stay in step
  EXPECT_TRUE(net.c->weight.grad().defined());
  EXPECT_EQ(net.c->weight.grad().abs().sum().item<float>(), 0.0f);
  EXPECT_GT(net.a->weight.grad().abs().sum().item<float>(), 0.0f);
}

TEST(GradientOverlapTest, ACommunicationErrorComesBackFromFinishAndStays) {
  torch::manual_seed(3);
  Net net;
  IdenticalRanksCollective comm(2);
  comm.FailFrom(1);
  FusedAllreducer fusion(comm, SmallBuckets());
  auto overlap = GradientOverlap::Create(ReverseParams(net), fusion);
  ASSERT_TRUE(overlap.ok());
  ASSERT_TRUE((*overlap)->BeginStep(1).ok());
  Loss(net).backward();
  Status s = (*overlap)->Finish();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("communicator broken"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("gradient bucket"), std::string::npos) << s.message();
  EXPECT_FALSE((*overlap)->BeginStep(2).ok());
  EXPECT_FALSE((*overlap)->Finish().ok());
  // Destruction joins the thread (the test would hang otherwise).
}

TEST(GradientOverlapTest, IgnoresBackwardOutsideAStepAndRejectsTwoBackwards) {
  torch::manual_seed(4);
  Net net;
  IdenticalRanksCollective comm(2);
  FusedAllreducer fusion(comm, SmallBuckets());
  auto overlap = GradientOverlap::Create(ReverseParams(net), fusion);
  ASSERT_TRUE(overlap.ok());
  Loss(net).backward();  // not armed: nothing is reduced
  EXPECT_EQ(comm.allreduce_calls(), 0);
  EXPECT_FALSE((*overlap)->Finish().ok());  // no step in progress
  ASSERT_TRUE((*overlap)->BeginStep(1).ok());
  torch::Tensor loss = Loss(net);
  loss.backward({}, /*retain_graph=*/true);
  loss.backward();
  Status s = (*overlap)->Finish();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("second gradient"), std::string::npos) << s.message();
}

TEST(GradientOverlapTest, RefusesParametersItCannotStage) {
  IdenticalRanksCollective comm(2);
  FusedAllreducer fusion(comm, SmallBuckets());
  auto doubles =
      GradientOverlap::Create({torch::zeros({3}, torch::kFloat64).requires_grad_()}, fusion);
  EXPECT_FALSE(doubles.ok());
  auto frozen = GradientOverlap::Create({torch::zeros({3})}, fusion);
  ASSERT_FALSE(frozen.ok());
  EXPECT_NE(frozen.status().message().find("parameter 0"), std::string::npos);
}

TEST(GradientOverlapTest, RecordsEveryBucketOnTheTimeline) {
  torch::manual_seed(6);
  Net net;
  LoopbackCollective comm;  // one rank: buckets still go through the thread
  FusedAllreducer fusion(comm, SmallBuckets());
  Timeline timeline;
  auto overlap = GradientOverlap::Create(ReverseParams(net), fusion, &timeline);
  ASSERT_TRUE(overlap.ok());
  ASSERT_TRUE((*overlap)->BeginStep(9).ok());
  torch::Tensor loss = Loss(net);
  loss.backward();
  ASSERT_TRUE((*overlap)->Finish().ok());
  std::set<std::pair<std::string, int64_t>> seen;
  for (const TraceEvent& e : timeline.Events()) {
    EXPECT_EQ(e.step, 9);
    seen.insert({e.name, e.bucket});
  }
  for (const char* name : {"NEGOTIATE", "FUSE", "ALLREDUCE", "UNFUSE"}) {
    for (size_t b = 0; b < (*overlap)->buckets(); ++b) {
      EXPECT_TRUE(seen.count({name, static_cast<int64_t>(b)})) << name << " " << b;
    }
  }
}

}  // namespace
}  // namespace dljob::trainer
