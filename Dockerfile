# The operator's image. Built with the project's own scripts on Debian
# bookworm; runs on bookworm-slim with only the shared libraries it needs,
# as an unprivileged user.
#   docker build -t gpu-placement-operator:0.1.0 .
FROM debian:bookworm AS build
WORKDIR /src
COPY . .
RUN scripts/setup --packages-only \
 && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DGPUPLACEMENT_TESTS=OFF -DGPUPLACEMENT_BENCH=OFF \
 && ninja -C build gpu-placement

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libssl3 libyaml-cpp0.7 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/bin/gpu-placement /usr/local/bin/gpu-placement
# The built-in catalog and rules, for reference and as a starting point
# for the chart's `catalog` and `rules` values.
COPY config/catalog.yaml config/rules.yaml /etc/gpu-placement/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/gpu-placement"]
CMD ["run"]
