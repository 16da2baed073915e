#include "images/trainer/models/builtin.h"

namespace dljob::trainer {

ModelRegistry BuiltinModels() {
  ModelRegistry registry;
  RegisterMnistCnn(registry);
  RegisterMnistMlp(registry);
  return registry;
}

}  // namespace dljob::trainer
