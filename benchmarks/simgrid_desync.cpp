/* The desynchronised patterns of desync.py in SimGrid's C++ core (S4U), written the usual way.

   Built and run by desync.py when libsimgrid-dev is installed:
     g++ -O2 -std=c++17 simgrid_desync.cpp -lsimgrid -o simgrid_desync
     ./simgrid_desync PATTERN P GAPS_FILE PLATFORM_XML
   Same model and platform as simgrid_desync.py: CM02, no TCP window, no cross traffic, a
   cluster of 10 GbE split-duplex private links and no backbone, so a message crosses its
   sender's up link and its receiver's down link (two 1 us link directions), as on netsim's
   star. Each rank's mailbox has its rank as permanent receiver (Mailbox::set_receiver: "the
   communications sent to this mailbox will start flowing to its host even before it does a
   get()", simgrid/s4u/Mailbox.hpp), so a send never waits for its receiver, as in netsim;
   sends are blocking put() (a rank's next step waits for its own send, as the trace says) and
   receives blocking get() when the rank needs the data. Prints JSON with the wall and CPU
   seconds of the simulation and the simulated makespan. */
#include <simgrid/s4u.hpp>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

static std::vector<double> gaps;
static int P;
static int steps;
static uint64_t chunk;
static bool ring;
static int payload = 0;

static void rank(int r)
{
  auto* right = sg4::Mailbox::by_name("m" + std::to_string((r + 1) % P));
  auto* mine = sg4::Mailbox::by_name("m" + std::to_string(r));
  for (int s = 0; s < steps; s++) {
    if (ring && s)
      mine->get<int>();  // the chunk the left neighbour sent in step s - 1
    sg4::this_actor::sleep_for(gaps[s * P + r]);
    right->put(&payload, chunk);
  }
  if (ring)
    mine->get<int>();
}

static void sink(int r)
{
  // Chains: rank r's right neighbour takes rank r's messages without constraining them.
  auto* box = sg4::Mailbox::by_name("m" + std::to_string((r + 1) % P));
  for (int s = 0; s < steps; s++)
    box->get<int>();
}

int main(int argc, char** argv)
{
  std::vector<std::string> args = {"simgrid_desync", "--cfg=network/model:CM02",
                                   "--cfg=network/TCP-gamma:0", "--cfg=network/crosstraffic:0",
                                   "--log=root.thres:critical"};
  std::string pattern = argv[1];
  P = std::stoi(argv[2]);
  std::ifstream in(argv[3]);
  for (double g; in >> g;)
    gaps.push_back(g);
  ring = pattern == "desync-ring";
  steps = 2 * (P - 1);
  chunk = (uint64_t)std::llround(100e6 / P);
  int sargc = (int)args.size();
  std::vector<char*> sargv;
  for (auto& a : args)
    sargv.push_back(a.data());
  sg4::Engine e(&sargc, sargv.data());
  e.load_platform(argv[4]);
  // Mailbox m(r + 1) receives rank r's messages: its permanent receiver is rank r + 1 (ring)
  // or rank r's sink (chains), declared before any actor runs.
  for (int r = 0; r < P; r++) {
    auto a = sg4::Actor::create("a" + std::to_string(r), e.host_by_name("h" + std::to_string(r)), rank, r);
    if (ring)
      sg4::Mailbox::by_name("m" + std::to_string(r))->set_receiver(a);
    else
      sg4::Mailbox::by_name("m" + std::to_string((r + 1) % P))
          ->set_receiver(sg4::Actor::create("s" + std::to_string(r),
                                            e.host_by_name("h" + std::to_string((r + 1) % P)), sink, r));
  }
  auto w0 = std::chrono::steady_clock::now();
  std::clock_t c0 = std::clock();
  e.run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf("{\"wall\": %.6f, \"cpu\": %.6f, \"makespan\": %.17g}\n", wall, cpu, sg4::Engine::get_clock());
  return 0;
}
