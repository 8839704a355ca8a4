// libxml2 (Debian libxml2-dev): the SAX2 push parser that reads GPX, KML and plists.
// Imported only by Features. Every callback TileKit installs has a fixed argument list
// (startElementNs, characters, entityDecl, serror...), so Swift implements them and no C
// shim is needed; the variadic error/warning callbacks stay NULL (serror replaces them).
#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU, and then <libxml/encoding.h> includes <unicode/ucnv.h>,
// whose types clash with Foundation's own ICU (_FoundationICU) in every Swift module that
// loads both ("'UErrorCode' has different definitions in different modules"). The ICU
// part is only two pointer fields at the end of xmlCharEncodingHandler, a struct TileKit
// never allocates or reads, so hiding it changes nothing that Swift uses.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
