// lstm_lm: truncated BPTT's carried state, the preset shapes, tied embeddings, the perplexity
// evaluation (a uniform model scores the vocabulary's size), gradient clipping, and a short run
// of the trainer on a language model.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/clipped_sgd.h"
#include "images/trainer/comm/loopback_collective.h"
#include "images/trainer/data/language_data.h"
#include "images/trainer/evaluator.h"
#include "images/trainer/language_model_flags.h"
#include "images/trainer/models/builtin.h"
#include "images/trainer/trainer.h"

namespace dljob::trainer {
namespace {

ModelPtr MakeLstm(LanguageModelOptions o, uint64_t seed = 1) {
  torch::manual_seed(seed);
  return BuiltinModels().Find("lstm_lm").value()->create_language_model(o);
}

int64_t Count(const Model& m) {
  int64_t n = 0;
  for (const torch::Tensor& p : m.parameters()) n += p.numel();
  return n;
}

TEST(LstmLanguageModelTest, CarriedStateContinuesTheSequence) {
  ModelPtr model = MakeLstm({50, 2, 16, 0.0, false, 0.1});
  model->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor tokens = torch::randint(0, 50, {12, 3}, torch::kInt64);  // 12 steps, 3 streams
  model->ResetState();
  torch::Tensor whole = model->forward(tokens);
  ASSERT_EQ(whole.sizes(), (std::vector<int64_t>{12, 3, 50}));
  model->ResetState();
  torch::Tensor first = model->forward(tokens.narrow(0, 0, 5));
  torch::Tensor second = model->forward(tokens.narrow(0, 5, 7));  // from the carried state
  EXPECT_TRUE(torch::allclose(torch::cat({first, second}), whole, 1e-5, 1e-6));
  model->ResetState();
  torch::Tensor fresh = model->forward(tokens.narrow(0, 5, 7));  // from zeros: different
  EXPECT_FALSE(torch::allclose(fresh, second, 1e-5, 1e-6));
}

TEST(LstmLanguageModelTest, StateIsDetachedBetweenBatches) {
  ModelPtr model = MakeLstm({30, 1, 8, 0.0, false, 0.1});
  torch::Tensor tokens = torch::randint(0, 30, {4, 2}, torch::kInt64);
  model->forward(tokens).sum().backward();
  model->zero_grad();
  // The second backward would fail ("trying to backward through the graph a second time") if
  // the carried state still belonged to the first batch's graph.
  EXPECT_NO_THROW(model->forward(tokens).sum().backward());
}

// Caffe-style numerical gradient check in float64, as models/gradient_check_test.cc does for the
// classifiers: the gradient of the per-word loss against central differences, every parameter
// tensor (tied embeddings: the shared weight gets both uses' gradients).
TEST(LstmLanguageModelTest, GradientsMatchCentralDifferences) {
  for (bool tied : {false, true}) {
    ModelPtr model = MakeLstm({13, 2, 6, 0.0, tied, 0.3}, 3);
    model->to(torch::kFloat64);
    torch::Tensor x = torch::randint(0, 13, {5, 2}, torch::kInt64);
    torch::Tensor y = torch::randint(0, 13, {5, 2}, torch::kInt64);
    auto loss = [&] {
      model->ResetState();
      torch::Tensor logits = model->forward(x);
      return torch::nn::functional::cross_entropy(logits.reshape({-1, 13}), y.reshape(-1));
    };
    loss().backward();
    torch::NoGradGuard no_grad;
    for (const auto& item : model->named_parameters()) {
      torch::Tensor flat = item.value().detach().view({-1});
      torch::Tensor grad = item.value().grad().view({-1});
      for (int64_t i = 0; i < flat.numel(); i += std::max<int64_t>(1, flat.numel() / 5)) {
        const double original = flat[i].item<double>();
        flat[i] = original + 1e-6;
        const double plus = loss().item<double>();
        flat[i] = original - 1e-6;
        const double minus = loss().item<double>();
        flat[i] = original;
        const double numeric = (plus - minus) / 2e-6;
        EXPECT_NEAR(grad[i].item<double>(), numeric, 1e-6 + 1e-4 * std::fabs(numeric))
            << (tied ? "tied " : "") << item.key() << "[" << i << "]";
      }
    }
  }
}

TEST(LstmLanguageModelTest, PresetShapesAndTiedEmbeddings) {
  LanguageModelFlags flags;
  LanguageModelSettings small = ResolveLanguageModel(flags);
  EXPECT_EQ(small.model.layers, 2);
  EXPECT_EQ(small.model.hidden_size, 200);
  EXPECT_EQ(small.bptt, 20);
  EXPECT_DOUBLE_EQ(small.model.dropout, 0.0);
  flags.preset = LstmConfig::kMedium;
  flags.bptt = 10;
  LanguageModelSettings medium = ResolveLanguageModel(flags);
  EXPECT_EQ(medium.model.hidden_size, 650);
  EXPECT_DOUBLE_EQ(medium.model.dropout, 0.5);
  EXPECT_EQ(medium.bptt, 10);  // the override wins
  EXPECT_DOUBLE_EQ(medium.clip_grad_norm, 5.0);

  // Small on a 10k vocabulary: embedding + 2 LSTM layers (4 gates, two biases) + decoder.
  const int64_t v = 10000, h = 200;
  const int64_t lstm = 2 * (4 * h * h + 4 * h * h + 2 * 4 * h);
  EXPECT_EQ(Count(*MakeLstm(small.model)), v * h + lstm + v * h + v);
  LanguageModelOptions tied = small.model;
  tied.tied_embeddings = true;
  EXPECT_EQ(Count(*MakeLstm(tied)), v * h + lstm + v);
}

TEST(PerplexityEvaluatorTest, UniformModelScoresTheVocabularySize) {
  const int64_t vocab = 37;
  ModelPtr model = MakeLstm({vocab, 2, 8, 0.0, false, 0.1});
  {
    torch::NoGradGuard no_grad;
    for (torch::Tensor& p : model->parameters()) p.zero_();  // logits 0: every word 1/37
  }
  LoopbackCollective collective;
  PerplexityEvaluator evaluator(torch::randint(0, vocab, {1003}, torch::kInt64), 10, 7);
  Result<EvalResult> r = evaluator.Evaluate(*model, collective, 1, torch::kCPU);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->perplexity.has_value());
  EXPECT_NEAR(*r->perplexity, static_cast<double>(vocab), 1e-3);
  EXPECT_EQ(r->human, "Epoch 1: validation perplexity = 37.00 (990 words)");  // 100 rows x 10 - 10
}

TEST(ClippedSgdTest, ScalesTheGlobalNormDownToTheLimit) {
  torch::Tensor a = torch::zeros({2}, torch::requires_grad());
  torch::Tensor b = torch::zeros({1}, torch::requires_grad());
  a.mutable_grad() = torch::tensor({3.0f, 0.0f});
  b.mutable_grad() = torch::tensor({4.0f});  // global norm 5
  ClippedSgd sgd({a, b}, torch::optim::SGDOptions(1.0), 1.0);
  sgd.step();
  EXPECT_TRUE(torch::allclose(a, torch::tensor({-0.6f, 0.0f})));
  EXPECT_TRUE(torch::allclose(b, torch::tensor({-0.8f})));
  ClippedSgd loose({a, b}, torch::optim::SGDOptions(1.0), 10.0);  // under the limit: untouched
  a.mutable_grad() = torch::tensor({3.0f, 0.0f});
  loose.step();
  EXPECT_TRUE(torch::allclose(a, torch::tensor({-3.6f, 0.0f})));
}

TEST(LanguageModelTrainingTest, LearnsARepeatingStreamAndReportsWordsAndPerplexity) {
  // A stream that repeats a 7-word cycle: an LSTM learns to predict it almost surely.
  torch::Tensor stream = torch::arange(4000, torch::kInt64).remainder(7);
  TokenStreamSource train(stream, 8, 10);
  PerplexityEvaluator valid(stream.narrow(0, 0, 500), 5, 10);
  ModelPtr model = MakeLstm({7, 1, 16, 0.0, false, 0.1});
  LoopbackCollective collective;
  std::ostringstream out;
  Reporter reporter(out, 0);
  TrainerOptions o;
  o.batch_size = 8;
  o.total_steps = 2 * train.steps_per_epoch();
  o.num_warmup_batches = 1;
  o.learning_rate = 1.0;
  o.momentum = 0.0;
  o.display_every = 10;
  o.rate_unit = RateUnit::kWords;
  o.samples_per_step = 8 * 10;
  o.loss_multiplier = 10;
  o.clip_grad_norm = 5.0;
  Result<TrainResult> r = Trainer(o, *model, collective, train, &valid, reporter).Run();
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->final_perplexity.has_value());
  EXPECT_LT(*r->final_perplexity, 1.5) << out.str();  // uniform would be 7
  const std::string text = out.str();
  EXPECT_NE(text.find("Step\tWords/sec\ttotal_loss"), std::string::npos) << text;
  EXPECT_NE(text.find("words/sec: "), std::string::npos) << text;
  EXPECT_NE(text.find("total words/sec: "), std::string::npos) << text;
  EXPECT_NE(text.find("Epoch 2: validation perplexity = "), std::string::npos) << text;
  EXPECT_NE(text.find("\"perplexity\":"), std::string::npos) << text;
  EXPECT_NE(text.find("\"words_per_sec\":"), std::string::npos) << text;
  EXPECT_EQ(text.find("images_per_sec"), std::string::npos) << text;
}

}  // namespace
}  // namespace dljob::trainer
