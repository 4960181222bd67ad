// chakra_feeder_dump: print the nodes of one Chakra .et file in the waves Chakra's own
// ETFeeder (src/feeder of github.com/mlcommons/chakra) makes issuable, read through its own
// accessors. Wave 0 is what the feeder issues at once; wave k+1 what finishing wave k frees.
// Output, one line per node: wave id type comm_src comm_dst comm_tag comm_size runtime name
// (comm fields -1 for other node types); then "stuck 1" if nodes were never issued, else
// "stuck 0".
#include <cstdint>
#include <iostream>
#include <memory>
#include <vector>

#include "et_feeder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: chakra_feeder_dump FILE.et" << std::endl;
    return 2;
  }
  Chakra::ETFeeder feeder(argv[1]);
  uint64_t wave = 0;
  while (true) {
    std::vector<std::shared_ptr<Chakra::ETFeederNode>> ready;
    for (auto node = feeder.getNextIssuableNode(); node != nullptr;
         node = feeder.getNextIssuableNode()) {
      ready.push_back(node);
    }
    if (ready.empty()) {
      break;
    }
    for (const auto& node : ready) {
      const auto type = node->type();
      const bool p2p = type == ChakraProtoMsg::COMM_SEND_NODE ||
          type == ChakraProtoMsg::COMM_RECV_NODE;
      std::cout << wave << ' ' << node->id() << ' ' << static_cast<int>(type) << ' '
                << (p2p ? static_cast<int64_t>(node->comm_src()) : -1) << ' '
                << (p2p ? static_cast<int64_t>(node->comm_dst()) : -1) << ' '
                << (p2p ? static_cast<int64_t>(node->comm_tag()) : -1) << ' '
                << (type == ChakraProtoMsg::COMP_NODE ? -1
                                                      : static_cast<int64_t>(node->comm_size()))
                << ' ' << node->runtime() << ' ' << node->name() << '\n';
    }
    for (const auto& node : ready) {
      feeder.freeChildrenNodes(node->id());
      feeder.removeNode(node->id());
    }
    ++wave;
  }
  // The feeder counts nothing: say only whether nodes were left that no wave freed.
  std::cout << "stuck " << (feeder.hasNodesToIssue() ? 1 : 0) << std::endl;
  return 0;
}
