# device_deps.sh — sourced by the GPU-machine scripts: unpack the libinih
# Debian packages carried in .deps/ (the GPU machine lacks libinih and cannot
# download) into /opt/deps and point pkg-config, CMake and the loader at it.
# Returns 1 when .deps/ holds no packages.
if ls .deps/*.deb > /dev/null 2>&1; then
    mkdir -p /opt/deps
    for f in .deps/*.deb; do dpkg -x "$f" /opt/deps; done
    # the .pc files say prefix=/usr; point them at the unpacked tree
    for pc in /opt/deps/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc; do
        [ -f "$pc" ] && sed -i 's|^prefix=/usr$|prefix=/opt/deps/usr|' "$pc"
    done
    export PKG_CONFIG_PATH=/opt/deps/usr/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    export CMAKE_PREFIX_PATH=/opt/deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
    export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export CPATH=/opt/deps/usr/include${CPATH:+:$CPATH}
    true
else
    false
fi
