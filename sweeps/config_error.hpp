#pragma once
// Config problems are collected, never thrown one at a time: a user fixing a preset sees every
// error at once, each with the JSON path of the offending value ("experiments[1].axes.T[0]").
#include <stdexcept>
#include <string>
#include <vector>

namespace decode_bench::sweeps {

struct ConfigError {
  std::string path;     // JSON path in the preset, or "--set KEY" for a command-line override
  std::string message;  // why the value is wrong
};

// One line per error: "path: message".
std::string format_config_errors(const std::vector<ConfigError>& errors);

// Thrown once validation has collected everything; the CLI prints it and exits 2.
class ConfigErrors : public std::runtime_error {
 public:
  explicit ConfigErrors(std::vector<ConfigError> errors)
      : std::runtime_error(format_config_errors(errors)), errors_(std::move(errors)) {}
  ConfigErrors(std::string path, std::string message)
      : ConfigErrors(std::vector<ConfigError>{{std::move(path), std::move(message)}}) {}
  const std::vector<ConfigError>& errors() const { return errors_; }

 private:
  std::vector<ConfigError> errors_;
};

}  // namespace decode_bench::sweeps
