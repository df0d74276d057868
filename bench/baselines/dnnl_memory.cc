// The engine, the stream and the reorders of the oneDNN baselines.
#include "baselines/dnnl_memory.h"

namespace tirtune::bench {

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& Stream() {
  static dnnl::stream stream(Engine());
  return stream;
}

NDArray RandomArray(std::vector<int64_t> shape, uint64_t seed) {
  NDArray a = NDArray::Empty(std::move(shape), DataType::Float(32));
  a.FillRandom(seed);
  return a;
}

dnnl::memory Wrap(NDArray& array, const dnnl::memory::desc& md) {
  return dnnl::memory(md, Engine(), array.raw());
}

dnnl::memory InFormat(dnnl::memory user, const dnnl::memory::desc& md) {
  if (md == user.get_desc()) return user;
  dnnl::memory m(md, Engine());
  dnnl::reorder(user, m).execute(Stream(), user, m);
  Stream().wait();
  return m;
}

dnnl::memory OutputIn(const dnnl::memory& user, const dnnl::memory::desc& md) {
  return md == user.get_desc() ? user : dnnl::memory(md, Engine());
}

void ReadBack(dnnl::memory result, dnnl::memory user) {
  if (result != user) dnnl::reorder(result, user).execute(Stream(), result, user);
  Stream().wait();
}

dnnl::memory::desc Strided(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

}  // namespace tirtune::bench
