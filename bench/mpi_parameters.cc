#include "bench/mpi_parameters.h"

#include <cstdint>
#include <cstring>

#include <mpi.h>

namespace dljob::bench {
namespace {

// The value of control variable `index` as text, read through a fresh handle.
std::optional<std::string> ReadCvar(int index) {
  char name[256];
  int name_len = sizeof(name);
  int verbosity = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
  int desc_len = 0;  // the description is not wanted
  int bind = 0;
  int scope = 0;
  if (MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &enumtype, nullptr, &desc_len,
                          &bind, &scope) != MPI_SUCCESS) {
    return std::nullopt;
  }
  MPI_T_cvar_handle handle;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) != MPI_SUCCESS) return std::nullopt;
  // Big enough for `count` elements of any type read below, and a string's terminator.
  std::vector<char> raw(static_cast<size_t>(count > 0 ? count : 1) * 8 + 1, '\0');
  std::optional<std::string> out;
  if (MPI_T_cvar_read(handle, raw.data()) == MPI_SUCCESS) {
    auto as = [&raw]<typename T>(T) {
      T v;
      std::memcpy(&v, raw.data(), sizeof(v));
      return v;
    };
    if (type == MPI_CHAR) {
      out = std::string(raw.data());
    } else if (type == MPI_INT) {
      out = std::to_string(as(int{}));
    } else if (type == MPI_UNSIGNED) {
      out = std::to_string(as(unsigned{}));
    } else if (type == MPI_UNSIGNED_LONG) {
      out = std::to_string(as((unsigned long){}));
    } else if (type == MPI_UNSIGNED_LONG_LONG) {
      out = std::to_string(as((unsigned long long){}));
    } else if (type == MPI_LONG_LONG) {
      out = std::to_string(as((long long){}));
    } else if (type == MPI_C_BOOL) {
      out = as(bool{}) ? "true" : "false";
    }
  }
  MPI_T_cvar_handle_free(&handle);
  return out;
}

}  // namespace

std::optional<std::string> MpiParameter(const std::string& name) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return std::nullopt;
  std::optional<std::string> value;
  int index = 0;
  if (MPI_T_cvar_get_index(name.c_str(), &index) == MPI_SUCCESS) value = ReadCvar(index);
  MPI_T_finalize();
  return value;
}

bool SetMpiIntParameter(const std::string& name, int value) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return false;
  bool written = false;
  int index = 0;
  MPI_T_cvar_handle handle;
  int count = 0;
  if (MPI_T_cvar_get_index(name.c_str(), &index) == MPI_SUCCESS &&
      MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
    written = count == 1 && MPI_T_cvar_write(handle, &value) == MPI_SUCCESS;
    MPI_T_cvar_handle_free(&handle);
  }
  MPI_T_finalize();
  return written;
}

std::string DescribeMpiParameters(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    std::optional<std::string> value = MpiParameter(name);
    if (!value) continue;
    out += (out.empty() ? "" : " ") + name + "=" + (value->empty() ? "\"\"" : *value);
  }
  return out;
}

}  // namespace dljob::bench
