#include "app/cli.h"

int main(int argc, char** argv) {
  return gpuplacement::app::runCli(argc, argv);
}
