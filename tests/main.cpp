// The test program's entry; Catch's implementation is in support/catch_session.cpp.
#include "support/catch_session.hpp"

int main(int argc, char** argv) { return run_catch_session(argc, argv); }
