#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "driver/build.h"
#include "ir/error.h"
#include "kiln/runtime/npy.hpp"

namespace kiln::cli {

int run_guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const CompileFailure& e) {
    std::cerr << "kiln: compiler failure: " << e.what() << "\n";
    return exit_code::kCompileFailure;
  } catch (const NotImplementedError& e) {
    std::cerr << "kiln: not implemented: " << e.what() << "\n";
    return exit_code::kNotImplemented;
  } catch (const UsageError& e) {
    std::cerr << "kiln: usage: " << e.what() << "\n";
    return exit_code::kUsage;
  } catch (const IoError& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    return exit_code::kIoError;
  } catch (const RuntimeFailure& e) {
    std::cerr << "kiln: run-time failure: " << e.what() << "\n";
    return exit_code::kRuntimeFailure;
  } catch (const UserError& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    return exit_code::kInvalidGraph;
  } catch (const npy::NpyError& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    return exit_code::kIoError;
  } catch (const InternalError& e) {
    std::cerr << "kiln: " << e.what() << " (please report this bug)\n";
    return exit_code::kInternalError;
  } catch (const std::exception& e) {
    std::cerr << "kiln: internal error: " << e.what() << " (please report this bug)\n";
    return exit_code::kInternalError;
  }
}

}  // namespace kiln::cli
