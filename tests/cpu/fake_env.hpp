// An environment snapshot for the pure GPU-selection functions of src/dispatch/device_select
// (they take the environment as a reader): unset variables are absent.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

namespace ozdgemm::test {

class fake_env {
 public:
  fake_env(std::initializer_list<std::pair<const std::string, std::string>> vars) : vars_(vars) {}
  void set(const std::string& name, const std::string& value) { vars_[name] = value; }
  std::function<const char*(const char*)> reader() const {
    return [this](const char* name) -> const char* {
      const auto it = vars_.find(name);
      return it == vars_.end() ? nullptr : it->second.c_str();
    };
  }

 private:
  std::map<std::string, std::string> vars_;
};

}  // namespace ozdgemm::test
