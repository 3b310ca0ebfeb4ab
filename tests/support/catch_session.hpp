#pragma once
// Runs Catch's test session: the test programs' main functions call it, so Catch's
// implementation (support/catch_session.cpp) compiles once for both.

/// Catch::Session().run(argc, argv): the exit code is the number of failed test cases.
int run_catch_session(int argc, char** argv);
