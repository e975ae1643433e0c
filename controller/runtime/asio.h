#pragma once

// Include Asio through this header. Boost 1.74's awaitable.hpp uses
// std::exchange without including <utility>, which breaks under g++ 12.
#include <utility>

#include <boost/asio.hpp>

namespace gpuplacement {
namespace asio = boost::asio;
}
