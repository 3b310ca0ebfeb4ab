// The test program's entry; Catch's implementation is in support/catch_session.cpp.
#include <catch2/catch.hpp>

int main(int argc, char** argv) { return Catch::Session().run(argc, argv); }
