for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit
python3 -m compileall -q /tmp/site oxi_cli
mkdir -p $OUT
timeout 280 python3 bench/bench_gpu.py --runs 3 --json $OUT/bench_gpu.json > $OUT/bench_gpu.txt 2>&1; echo "gpu bench rc $?"
tail -45 $OUT/bench_gpu.txt
timeout 250 python3 bench/bench_cpu.py --threads 16 --runs 3 --tools oxi,oiiotool --workdir /tmp/oxi-bench --json $OUT/bench_cpu16.json > $OUT/bench_cpu16.txt 2>&1; echo "cpu bench rc $?"
grep -A12 "oxi (CPU) vs" $OUT/bench_cpu16.txt
P=/tmp/oxi-bench/plate_4096x2160_half_zip.exr
for s in single streaming single streaming; do for b in gpu cpu; do /usr/bin/time -f "$b $s cdl %e s %M KB" python3 -m oxi_cli cdl $P /tmp/o.exr --slope 1.1,1,0.9 --power 1.2 --sat 0.9 --backend $b --strategy $s; done; done 2>&1 | sort
