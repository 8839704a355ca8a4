// SQLite (Debian libsqlite3-dev, 3.40). Imported by the MBTiles module, by MBTilesTests (which
// reads SQLite's memory figure) and by CLibrariesTests (which opens SQLite itself, so it makes
// MBTiles' tk_sqlite_stop_memory_statistics() call first).
#ifndef TK_SQLITE_SHIM_H
#define TK_SQLITE_SHIM_H
#include <sqlite3.h>

/// Turns off SQLite's memory statistics, which Swift cannot do itself (sqlite3_config is
/// variadic). With them on (the default), every sqlite3_malloc and sqlite3_free takes one
/// mutex shared by the whole process, so two server threads each reading a tile through
/// their own connection waited for each other on every allocation. TileKit reads no SQLite
/// memory figure and sets no SQLite heap limit. Returns SQLITE_MISUSE, changing nothing, once
/// SQLite is initialized (any connection opened first): call it before opening one.
static inline int tk_sqlite_stop_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
