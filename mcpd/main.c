/*
 * main() of mcpd as it ships: the server with no extension.  A test
 * build has a main() of its own that registers one first (mcp.h), and
 * leaves this file out.
 */
#include "mcpd.h"

int
main(int argc, char *argv[])
{
	return mcpd_main(argc, argv);
}
