// kiln cache info / kiln cache clean [--max-size SIZE]: what the build cache holds, and
// trimming it (driver/cache_maintenance.h).
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "driver/build.h"
#include "driver/cache_maintenance.h"
#include "ir/error.h"

namespace kiln::cli {

namespace {

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  std::ostringstream s;
  if (unit == 0)
    s << bytes << " bytes";
  else
    s << std::fixed << std::setprecision(1) << value << " " << units[unit];
  return s.str();
}

}  // namespace

void add_cache_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("cache", "Show or trim the cache of built libraries");
  cmd->require_subcommand(1);
  auto cache_dir = std::make_shared<std::string>();
  auto max_size = std::make_shared<std::string>();

  auto* info = cmd->add_subcommand("info", "What the cache holds: entries, their size, temporary build folders");
  info->add_option("--cache-dir", *cache_dir, "cache folder (default: $XDG_CACHE_HOME/kiln)");
  info->callback([&exit_code, cache_dir] {
    exit_code = run_guarded([&] {
      BuildOptions options;
      options.cache_dir = *cache_dir;
      const CacheInfo c = cache_info(resolve_cache_dir(options));
      std::cout << "cache folder:      " << c.root << "\n"
                << "libraries:         " << c.entries << " (" << human_bytes(c.entry_bytes) << ")\n"
                << "direct-mode index: " << c.direct_records << " record(s)\n"
                << "build folders:     " << c.temp_in_use << " in use, " << c.temp_unused << " left by failed or "
                << "killed compiles (" << human_bytes(c.temp_bytes) << ")\n";
      return exit_code::kOk;
    });
  });

  auto* clean = cmd->add_subcommand(
      "clean", "Remove cached libraries (all, or the least recently used beyond --max-size) and left-over build folders");
  clean->add_option("--cache-dir", *cache_dir, "cache folder (default: $XDG_CACHE_HOME/kiln)");
  clean->add_option("--max-size", *max_size, "keep the most recently used libraries up to this size (500M, 2G, ...)");
  clean->callback([&exit_code, cache_dir, max_size] {
    exit_code = run_guarded([&] {
      BuildOptions options;
      options.cache_dir = *cache_dir;
      const bool limit = !max_size->empty();
      std::uint64_t limit_bytes = 0;
      try {
        if (limit) limit_bytes = parse_size(*max_size);
      } catch (const UserError& e) {
        std::cerr << "kiln: --max-size: " << e.what() << "\n";
        return exit_code::kUsage;
      }
      const CleanReport r = clean_cache(resolve_cache_dir(options), limit_bytes, limit);
      std::cout << "removed " << r.entries_removed << " librar" << (r.entries_removed == 1 ? "y" : "ies") << " ("
                << human_bytes(r.bytes_removed) << ") and " << r.temp_removed << " left-over build folder(s)\n";
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
