// Beat 9: explain it to a colleague. A free-text box, then the model answer, with keyword hints
// that only check whether the key ideas are named (a word match, not a grade).

const IDEAS = [
  ['the waiting queue (num_requests_waiting)', /queue|waiting|num_requests_waiting|backlog/i],
  ['TTFT p99 (the tail against its SLO)', /ttft|first token|p99|tail/i],
  ['the knee', /knee|saturat/i],
  ['throughput stops improving, only latency grows', /throughput/i],
  ["Little's Law for sizing", /little|concurrency|max-num-seqs|max_num_seqs|cap\b/i],
];

export function setup() {
  const text = document.getElementById('colleague-text');
  const button = document.getElementById('colleague-show');
  const answer = document.getElementById('colleague-answer');
  const list = document.getElementById('colleague-hint-list');

  const hints = () => {
    const t = text.value;
    list.replaceChildren(
      ...IDEAS.map(([label, re]) => {
        const li = document.createElement('li');
        const hit = re.test(t);
        li.classList.toggle('hit', hit);
        li.textContent = `${label}: ${hit ? 'mentioned' : t.trim() ? 'not mentioned' : 'write something first'}`;
        return li;
      }),
    );
  };
  button.addEventListener('click', () => {
    answer.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    button.textContent = 'Model answer shown below';
    hints();
    answer.focus({ preventScroll: true });
  });
  text.addEventListener('input', () => {
    if (!answer.hidden) hints();
  });
}
