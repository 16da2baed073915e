#include "images/trainer/models/builtin.h"

namespace dljob::trainer {

ModelRegistry BuiltinModels() {
  ModelRegistry registry;
  RegisterMnistCnn(registry);
  RegisterMnistMlp(registry);
  RegisterResNet(registry);
  RegisterVgg(registry);
  RegisterAlexNet(registry);
  RegisterGoogLeNet(registry);
  RegisterInception3(registry);
  RegisterLstmLanguageModel(registry);
  return registry;
}

}  // namespace dljob::trainer
