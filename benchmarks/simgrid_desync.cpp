/* The desynchronised patterns of desync.py in SimGrid's C++ core (S4U), for comparison.

   Built and run by desync.py when libsimgrid-dev is installed:
     g++ -O2 -std=c++17 simgrid_desync.cpp -lsimgrid -o simgrid_desync
     ./simgrid_desync PATTERN P GAPS_FILE PLATFORM_XML
   Same model and platform as simgrid_desync.py (CM02, no TCP window, no cross traffic,
   a cluster of 10 GbE split-duplex links to a fat-pipe backbone); prints JSON with the
   wall and CPU seconds of the simulation and the simulated makespan. */
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
static double chunk;
static bool ring;

static void rank(int r)
{
  auto* mine = sg4::Mailbox::by_name("m" + std::to_string(r));
  auto* right = sg4::Mailbox::by_name("m" + std::to_string((r + 1) % P));
  std::vector<sg4::CommPtr> recvs;
  std::vector<int*> data(steps, nullptr);
  if (ring)  // post every receive first, so a send never waits for its receiver
    for (int s = 0; s < steps; s++)
      recvs.push_back(mine->get_async<int>(&data[s]));
  sg4::CommPtr send;
  static int payload = 0;
  for (int s = 0; s < steps; s++) {
    if (s) {
      send->wait();
      if (ring)
        recvs[s - 1]->wait();
    }
    sg4::this_actor::sleep_for(gaps[s * P + r]);
    send = right->put_async(&payload, (uint64_t)chunk);
  }
  send->wait();
  if (ring)
    recvs.back()->wait();
}

static void sink(int r)
{
  // Chains: drain rank r's messages without constraining them.
  auto* box = sg4::Mailbox::by_name("m" + std::to_string((r + 1) % P));
  std::vector<int*> data(steps, nullptr);
  std::vector<sg4::CommPtr> pending;
  for (int s = 0; s < steps; s++)
    pending.push_back(box->get_async<int>(&data[s]));
  for (auto& c : pending)
    c->wait();
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
  chunk = std::round(100e6 / P);
  int sargc = (int)args.size();
  std::vector<char*> sargv;
  for (auto& a : args)
    sargv.push_back(a.data());
  sg4::Engine e(&sargc, sargv.data());
  e.load_platform(argv[4]);
  for (int r = 0; r < P; r++) {
    sg4::Actor::create("a" + std::to_string(r), e.host_by_name("h" + std::to_string(r)), rank, r);
    if (!ring)
      sg4::Actor::create("s" + std::to_string(r), e.host_by_name("h" + std::to_string((r + 1) % P)), sink, r);
  }
  auto w0 = std::chrono::steady_clock::now();
  std::clock_t c0 = std::clock();
  e.run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf("{\"wall\": %.6f, \"cpu\": %.6f, \"makespan\": %.17g}\n", wall, cpu, sg4::Engine::get_clock());
  return 0;
}
